// TRUST_PROXY behind a real nginx: the failed-authentication limit counts each real client
// (from X-Forwarded-For, which nginx sets) rather than the proxy, and the access log names the
// client; a peer that is not a trusted proxy cannot choose its address by sending the header.
// Clients are told apart by their source address on the loopback network (127.0.0.2, .3, …).

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';
import { skipUnlessServices, startNginx } from '../helpers/services.ts';

const skip = skipUnlessServices('nginx');
const FAILED_AUTH_LIMIT = 100;

/** GET `url` with a key nobody has, from `localAddress`, with extra headers; resolves with the status. */
function badKeyRequest(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/listings`, { localAddress, headers: { Authorization: 'Bearer mk_nobody', ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

test('TRUST_PROXY=127.0.0.1 behind nginx: failed authentications count per real client, and the access log names it', { skip, timeout: 120_000 }, async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { dataDir: null, env: { TRUST_PROXY: '127.0.0.1, ::1' }, output });
  const nginx = await startNginx([new URL(server.url).host]);
  t.after(() => nginx.destroy());

  for (let index = 0; index < FAILED_AUTH_LIMIT; index += 1) assert.equal(await badKeyRequest(nginx.url, '127.0.0.2'), 401);
  assert.equal(await badKeyRequest(nginx.url, '127.0.0.2'), 429, 'the guessing client is stopped');
  assert.equal(await badKeyRequest(nginx.url, '127.0.0.3'), 401, 'another client behind the same proxy is not');
  // nginx replaces the header (proxy_set_header X-Forwarded-For $remote_addr): a forged one changes nothing.
  assert.equal(await badKeyRequest(nginx.url, '127.0.0.2', { 'X-Forwarded-For': '198.51.100.9' }), 429);

  await server.app.close();
  const lines = output.join('').split('\n').filter((line) => line.startsWith('{"time"')).map((line) => JSON.parse(line) as { client?: string });
  assert.equal(lines.filter((line) => line.client === '127.0.0.2').length, FAILED_AUTH_LIMIT + 2);
  assert.equal(lines.filter((line) => line.client === '127.0.0.3').length, 1);
});

test('a client that is not a trusted proxy: its X-Forwarded-For is ignored, its own address counts', { skip: false, timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null, env: { TRUST_PROXY: '10.0.0.0/8' } });
  for (let index = 0; index < FAILED_AUTH_LIMIT; index += 1) {
    assert.equal(await badKeyRequest(server.url, '127.0.0.4', { 'X-Forwarded-For': `198.51.100.${index}` }), 401);
  }
  assert.equal(await badKeyRequest(server.url, '127.0.0.4', { 'X-Forwarded-For': '198.51.100.200' }), 429, 'a new header each time does not help');
  assert.equal(await badKeyRequest(server.url, '127.0.0.5'), 401, 'another address is counted apart');
});
