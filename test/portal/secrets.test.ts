// No password, session value or invitation token reaches the access log, the server's other
// output, the data directory (the log, also after compaction) or /metrics: the store keeps a
// password as scrypt, a session and an invitation as SHA-256, and the invitation travels in
// the link's fragment, which a browser never sends.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cookieFrom, sameOrigin } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

test('passwords, session values and invitation tokens are nowhere in logs, DATA_DIR or /metrics', async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { output, env: { PORTAL_SIGNUP: 'open' } });
  const secrets: string[] = [];
  const user = await server.createUser({ email: 'secret-keeper@example.com' });

  const invitation = await server.admin('POST', `/admin/v1/users/${user.id}/invitations`);
  const token = invitation.body.data.token as string;
  assert.equal(new URL(invitation.body.data.url).hash, `#invitation=${token}`, 'the token is in the fragment only');
  assert.equal(new URL(invitation.body.data.url).search, '');
  assert.equal(invitation.headers.get('cache-control'), 'no-store');
  const firstPassword = 'first secret passphrase';
  const set = await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: token, password: firstPassword } });
  assert.equal(set.status, 201);
  const firstCookie = cookieFrom(set)!;
  const secondPassword = 'second secret passphrase';
  assert.equal((await server.request('POST', '/portal/v1/password', { headers: { cookie: firstCookie, ...sameOrigin(server) }, body: { current_password: firstPassword, password: secondPassword } })).status, 200);
  const signIn = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: 'secret-keeper@example.com', password: secondPassword } });
  const secondCookie = cookieFrom(signIn)!;
  const wrongPassword = 'a wrong but secret guess';
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: 'secret-keeper@example.com', password: wrongPassword } })).status, 401);
  const signupPassword = 'signed up with this one';
  const signup = await server.request('POST', '/portal/v1/signup', { headers: sameOrigin(server), body: { name: 'Newcomer', email: 'newcomer@example.com', password: signupPassword } });
  assert.equal(signup.status, 201, signup.text);
  const thirdCookie = cookieFrom(signup)!;
  await server.request('GET', '/portal/v1/me', { headers: { cookie: secondCookie } });
  secrets.push(token, firstPassword, secondPassword, wrongPassword, signupPassword);
  for (const cookie of [firstCookie, secondCookie, thirdCookie]) secrets.push(cookie.split('=')[1]!);
  assert.ok(secrets.every((secret) => secret.length >= 12));

  const metrics = await server.admin('GET', '/metrics');
  assert.equal(metrics.status, 200);
  const beforeCompaction = dataDirText(server.dataDir!);
  assert.equal((await server.admin('POST', '/admin/v1/compact')).status, 200);
  const backup = await server.admin('GET', '/admin/v1/backup');
  await server.close();
  const places: Record<string, string> = {
    'the server output (access log, warnings)': output.join(''),
    'DATA_DIR before compaction': beforeCompaction,
    'DATA_DIR after compaction': dataDirText(server.dataDir!),
    '/metrics': metrics.text,
    'the backup': backup.text,
  };
  assert.ok(places['the server output (access log, warnings)']!.includes('/portal/v1/session'), 'the access log did log the portal requests');
  assert.ok(places['DATA_DIR after compaction']!.includes('scrypt$'), 'the password is kept, as scrypt');
  for (const [place, text] of Object.entries(places)) {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${place} holds a secret (${secret.slice(0, 4)}…)`);
  }
});

function dataDirText(dir: string): string {
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n');
}
