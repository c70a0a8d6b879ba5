// The address guard through a real server (private addresses not allowed): registering a
// webhook at any IANA special-purpose address, or at one of this host's own interface
// addresses, is refused with 400 and writes nothing.

import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

/** One address (or edge) of each special-purpose range, as a URL host. */
const SPECIAL_PURPOSE_HOSTS = [
  '0.1.2.3', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '192.0.0.9',
  '192.0.2.10', '192.31.196.1', '192.52.193.1', '192.88.99.1', '192.168.0.1', '192.175.48.1',
  '198.18.0.1', '198.19.255.254', '198.51.100.7', '203.0.113.200', '224.0.0.251', '240.0.0.1',
  '255.255.255.255',
  '[::]', '[::1]', '[::ffff:93.184.216.34]', '[::808:808]', '[::ffff:0:808:808]', '[64:ff9b::808:808]',
  '[64:ff9b:1::1]', '[100::1]', '[2001::1]', '[2001:2::1]', '[2001:db8::1]', '[2002:5db8:d822::1]',
  '[2620:4f:8000::1]', '[3fff::1]', '[5f00::1]', '[fc00::1]', '[fd12:3456::1]', '[fe80::1]',
  '[fec0::1]', '[ff02::1]',
];

/** This host's own addresses other than loopback (for example its LAN or public address). */
function ownHosts(): string[] {
  const hosts: string[] = [];
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.internal) continue;
      hosts.push(entry.family === 'IPv6' ? `[${entry.address.split('%')[0]}]` : entry.address);
    }
  }
  return hosts;
}

test('POST /v1/webhooks to a special-purpose or own address → 400, nothing registered', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '0' } });
  const { key } = await server.userWithKey('member', ['read:webhooks', 'write:webhooks']);
  const own = ownHosts();
  assert.ok(own.length > 0, 'this host has a non-loopback interface to test with');
  for (const host of [...SPECIAL_PURPOSE_HOSTS, ...own]) {
    await t.test(`http://${host}:8080/hook → 400`, async () => {
      const response = await server.request('POST', '/v1/webhooks', { key, body: { url: `http://${host}:8080/hook` } });
      assert.equal(response.status, 400, response.text);
      assert.match(response.body.error, /private|reserved|own address/);
    });
  }
  const list = await server.request('GET', '/v1/webhooks', { key });
  assert.deepEqual(list.body.data, []);
});
