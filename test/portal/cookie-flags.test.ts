// The session cookie's flags. Over HTTPS (a real TLS connection to the app) it is Secure and
// named with the __Host- prefix; behind a TLS terminator the same follows from an https
// MARKETPLACE_URL. Over plain HTTP neither can be used. Always HttpOnly, SameSite=Strict, Path=/.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { setPassword } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

/** A self-signed certificate for 127.0.0.1, made for this test. */
function selfSignedCertificate(t: TestContext): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portal-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const made = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ]);
  assert.equal(made.status, 0, made.stderr.toString());
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
}

/** TLS in front of the app's own HTTP server: each decrypted connection is handed to it, so its sockets are TLS sockets. */
async function tlsFront(t: TestContext, server: TestServer, tls: { key: string; cert: string }): Promise<number> {
  const front: TlsServer = createTlsServer(tls, (socket) => server.app.server.emit('connection', socket));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => front.close(() => resolve())));
  return (front.address() as AddressInfo).port;
}

function httpsPost(port: number, ca: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function attributesOf(setCookie: string): string[] {
  return setCookie.split(';').map((part) => part.trim());
}

test('over a real TLS connection: __Host-marketplace_session, Secure, HttpOnly, SameSite=Strict, Path=/, no Domain', { skip: hasOpenssl ? false : 'openssl is not installed' }, async (t) => {
  const tls = selfSignedCertificate(t);
  const server = await startServer(t);
  const port = await tlsFront(t, server, tls);
  const user = await server.createUser({ email: 'tls@example.com' });
  await setPassword(server, user.id, 'secure cookies only');
  const origin = `https://127.0.0.1:${port}`;
  const signIn = await httpsPost(port, tls.cert, '/portal/v1/session', { email: 'tls@example.com', password: 'secure cookies only' }, { origin });
  assert.equal(signIn.status, 201, signIn.text);
  const setCookie = String(signIn.headers['set-cookie']);
  const attributes = attributesOf(setCookie);
  assert.match(attributes[0]!, /^__Host-marketplace_session=[A-Za-z0-9_-]{43}$/);
  for (const flag of ['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']) assert.ok(attributes.includes(flag), `${flag} in ${setCookie}`);
  assert.ok(!attributes.some((attribute) => attribute.toLowerCase().startsWith('domain=')), 'no Domain (the __Host- prefix forbids it)');

  // The http origin is not this server's origin over TLS.
  const plainOrigin = await httpsPost(port, tls.cert, '/portal/v1/session', { email: 'tls@example.com', password: 'secure cookies only' }, { origin: `http://127.0.0.1:${port}` });
  assert.equal(plainOrigin.status, 403);
  // Over TLS only the __Host- cookie counts: the same value under the plain name is not read.
  const value = attributes[0]!.split('=')[1]!;
  const withPlainName = await httpsPost(port, tls.cert, '/portal/v1/password', { current_password: 'secure cookies only', password: 'another secure one' }, { origin, cookie: `marketplace_session=${value}` });
  assert.equal(withPlainName.status, 401);
  const withHostName = await httpsPost(port, tls.cert, '/portal/v1/password', { current_password: 'secure cookies only', password: 'another secure one' }, { origin, cookie: `__Host-marketplace_session=${value}` });
  assert.equal(withHostName.status, 200, withHostName.text);
});

test('behind a TLS terminator (MARKETPLACE_URL=https://…): the cookie is Secure with the __Host- prefix', async (t) => {
  const server = await startServer(t, { env: { MARKETPLACE_URL: 'https://market.example.com' } });
  const user = await server.createUser({ email: 'behind@example.com' });
  const invitation = await server.admin('POST', `/admin/v1/users/${user.id}/invitations`);
  assert.match(invitation.body.data.url, /^https:\/\/market\.example\.com\/portal#invitation=/);
  const set = await server.request('POST', '/portal/v1/password', { headers: { origin: 'https://market.example.com' }, body: { invitation: invitation.body.data.token, password: 'terminated elsewhere' } });
  assert.equal(set.status, 201, set.text);
  const attributes = attributesOf(set.headers.get('set-cookie')!);
  assert.match(attributes[0]!, /^__Host-marketplace_session=/);
  assert.ok(attributes.includes('Secure'));
  const cookie = attributes[0]!;
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie } })).status, 200);
});
