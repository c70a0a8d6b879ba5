// The SSRF guard: which webhook URLs and addresses are refused, with and without
// WEBHOOK_ALLOW_PRIVATE, and the look-up that checks what a name resolves to at send time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { networkInterfaces } from 'node:os';
import {
  guardedLookup,
  isForbiddenAddress,
  validateWebhookUrl,
} from '../../src/webhooks/address-guard.ts';
import type { BaseLookup } from '../../src/webhooks/address-guard.ts';

const LONG_URL = `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`;

// Refused because of where they point: allowed when private addresses are.
const PRIVATE_URLS = [
  'http://127.0.0.1',
  'http://localhost',
  'http://hooks.localhost/x',
  'http://LOCALHOST./',
  'http://2130706433',
  'http://0x7f000001',
  'http://0177.0.0.1',
  'http://[::1]',
  'http://[::ffff:127.0.0.1]',
  'http://[::ffff:7f00:1]',
  'http://10.0.0.1',
  'http://172.16.5.4',
  'http://192.168.1.1',
  'http://169.254.169.254',
  'http://100.64.0.1',
  'http://[fd00::1]',
  'http://[fe80::1]',
  'http://[64:ff9b::7f00:1]',
  'http://0.0.0.0',
  'http://0',
  'http://255.255.255.255',
  'http://[2002:7f00:1::]',
  'http://192.0.2.1', // documentation ranges
  'http://198.51.100.1',
  'http://203.0.113.1',
  'http://[2001:db8::1]',
  'http://[::ffff:93.184.216.34]/', // IPv4-mapped, whatever is inside
];

// Refused whatever the setting.
const MALFORMED_URLS = [
  'ftp://example.com',
  'file:///etc/passwd',
  'http://user:pass@example.com',
  'http://user@example.com',
  LONG_URL,
  'not a url',
];

const PUBLIC_URLS = [
  'https://example.com/hook',
  'http://93.184.216.34/x',
  'https://[2606:4700::1111]/',
  'https://hooks.example.com:8443/a?b=c',
];

test('the 2,049-character URL in the table is one past the limit', () => {
  assert.equal(LONG_URL.length, 2049);
  assert.equal(validateWebhookUrl(LONG_URL.slice(0, 2048), false).ok, true);
});

test('WHATWG parsing turns numeric spellings of loopback into 127.0.0.1', async (t) => {
  for (const raw of ['http://2130706433', 'http://0x7f000001', 'http://0177.0.0.1']) {
    await t.test(raw, async () => {
      assert.equal(new URL(raw).hostname, '127.0.0.1', raw);
    });
  }
});

for (const raw of PRIVATE_URLS) {
  test(`${raw} → refused, allowed with allowPrivate`, () => {
    const refused = validateWebhookUrl(raw, false);
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.match(refused.reason, /private|localhost/);
    assert.equal(validateWebhookUrl(raw, true).ok, true);
  });
}

for (const raw of MALFORMED_URLS) {
  test(`${raw.slice(0, 40)} → refused even with allowPrivate`, () => {
    assert.equal(validateWebhookUrl(raw, false).ok, false);
    assert.equal(validateWebhookUrl(raw, true).ok, false);
  });
}

for (const raw of PUBLIC_URLS) {
  test(`${raw} → allowed`, () => {
    const result = validateWebhookUrl(raw, false);
    assert.equal(result.ok, true);
    if (result.ok) assert.equal(result.url.href, new URL(raw).href);
  });
}

test('isForbiddenAddress: IPv4 ranges, edges included', () => {
  const forbidden = [
    '0.0.0.0', '0.255.255.255', '10.0.0.0', '10.255.255.255', '100.64.0.0', '100.127.255.255',
    '127.0.0.1', '127.255.255.254', '169.254.0.1', '169.254.169.254', '172.16.0.0', '172.31.255.255',
    '192.0.0.8', '192.168.0.1', '198.18.0.1', '198.19.255.255', '224.0.0.1', '239.255.255.255',
    '240.0.0.1', '255.255.255.255', '192.0.2.0', '192.0.2.255', '198.51.100.0', '198.51.100.255',
    '203.0.113.0', '203.0.113.255', '192.31.196.1', '192.52.193.1', '192.88.99.1', '192.175.48.1',
  ];
  const allowed = [
    '1.1.1.1', '8.8.8.8', '93.184.216.34', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0',
    '172.15.255.255', '172.32.0.0', '192.0.1.255', '192.0.3.0', '198.51.99.255', '198.51.101.0',
    '203.0.112.255', '203.0.114.0', '192.167.255.255', '192.169.0.0', '198.17.255.255',
    '198.20.0.0', '223.255.255.255', '169.253.255.255', '126.255.255.255', '128.0.0.0',
  ];
  for (const ip of forbidden) assert.equal(isForbiddenAddress(ip), true, ip);
  for (const ip of allowed) assert.equal(isForbiddenAddress(ip), false, ip);
});

test('isForbiddenAddress: IPv6 ranges and IPv4 carried inside IPv6', () => {
  const forbidden = [
    '::', '::1', '[::1]', 'fc00::1', 'fdff:ffff::1', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fec0::1',
    'feff::1', 'ff02::1', 'ff05::1:3',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::ffff:169.254.169.254',
    '::127.0.0.1', '::a00:1', // IPv4-compatible
    '::ffff:0:7f00:1', // IPv4-translated
    '64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::1', // NAT64, whatever is inside
    '2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:101::', // 6to4 around a private IPv4
    '0:0:0:0:0:ffff:7f00:0001',
    // the IPv4-carrying forms are refused whatever they carry
    '::ffff:93.184.216.34', '::ffff:5db8:d822', '::808:808', '2002:5db8:d822::1', '::ffff:0:808:808',
    '100::1', '2001::1', '2001:1ff:ffff::1', '2001:db8::1', '2001:db8:ffff::1', '2620:4f:8000::1',
    '3fff::1', '3fff:fff::1', '5f00::1',
  ];
  const allowed = [
    '2606:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::200e',
    'fbff::1', 'fe7f::1', 'ff0::1', '64:ff9a::7f00:1', '2001:200::1', '2001:db9::1', '3fff:1000::1',
    '101::1', '2620:4f:8001::1',
  ];
  for (const ip of forbidden) assert.equal(isForbiddenAddress(ip), true, ip);
  for (const ip of allowed) assert.equal(isForbiddenAddress(ip), false, ip);
});

test("isForbiddenAddress: the host's own interface addresses, public ones included", () => {
  const interfaces = {
    lo: [{ address: '127.0.0.1' }],
    eth0: [{ address: '93.184.216.34' }, { address: '2606:2800:220:1:248:1893:25c8:1946' }],
  };
  assert.equal(isForbiddenAddress('93.184.216.34', interfaces), true);
  assert.equal(isForbiddenAddress('2606:2800:220:1:248:1893:25C8:1946', interfaces), true, 'another spelling');
  assert.equal(isForbiddenAddress('[2606:2800:220:1:248:1893:25c8:1946]', interfaces), true);
  assert.equal(isForbiddenAddress('93.184.216.35', interfaces), false);
  assert.equal(isForbiddenAddress('93.184.216.34', {}), false, 'not ours elsewhere');
});

test('isForbiddenAddress: anything that is not an IP address counts as forbidden', async (t) => {
  for (const text of ['', 'example.com', '0177.0.0.1', '1.2.3', '1::2::3', '[::1', 'localhost']) {
    await t.test(JSON.stringify(text), async () => {
      assert.equal(isForbiddenAddress(text), true, JSON.stringify(text));
    });
  }
});

/** A base look-up answering from a table, as dns.lookup with `all: true` would. */
function stubLookup(table: Record<string, string[]>): BaseLookup {
  return (hostname, _options, callback) => {
    const addresses: LookupAddress[] = (table[hostname] ?? []).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    setImmediate(() => callback(null, addresses));
  };
}

interface LookupResult {
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family: number | undefined;
}

function runLookup(
  allowPrivate: boolean,
  table: Record<string, string[]>,
  hostname: string,
  all: boolean,
): Promise<LookupResult> {
  const lookup = guardedLookup(allowPrivate, stubLookup(table));
  return new Promise((resolve) => {
    lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family }));
  });
}

test('guardedLookup refuses a name that resolves to 127.0.0.1', async () => {
  const table = { 'hooks.example.com': ['127.0.0.1'] };
  for (const all of [false, true]) {
    const result = await runLookup(false, table, 'hooks.example.com', all);
    assert.equal(result.error?.code, 'EWEBHOOKADDR');
  }
});

test('guardedLookup refuses a name with one public and one private address', async () => {
  const result = await runLookup(false, { 'hooks.example.com': ['93.184.216.34', '::1'] }, 'hooks.example.com', false);
  assert.equal(result.error?.code, 'EWEBHOOKADDR');
});

test('guardedLookup passes a public address, in both callback forms', async () => {
  const table = { 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] };
  const single = await runLookup(false, table, 'hooks.example.com', false);
  assert.equal(single.error, null);
  assert.equal(single.address, '93.184.216.34');
  assert.equal(single.family, 4);

  const all = await runLookup(false, table, 'hooks.example.com', true);
  assert.equal(all.error, null);
  assert.deepEqual(all.address, [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ]);
});

test('guardedLookup lets private addresses through when allowed', async () => {
  const result = await runLookup(true, { 'hooks.example.com': ['127.0.0.1'] }, 'hooks.example.com', false);
  assert.equal(result.error, null);
  assert.equal(result.address, '127.0.0.1');
});

test('guardedLookup reports a name with no address, and passes look-up errors on', async () => {
  const empty = await runLookup(false, {}, 'nowhere.example.com', false);
  assert.equal(empty.error?.code, 'ENOTFOUND');

  const failing: BaseLookup = (hostname, _options, callback) => {
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo EAI_AGAIN ${hostname}`);
    error.code = 'EAI_AGAIN';
    callback(error, []);
  };
  const failed = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    guardedLookup(false, failing)('hooks.example.com', {}, (error) => resolve(error));
  });
  assert.equal(failed?.code, 'EAI_AGAIN');
});

test("guardedLookup refuses a name that resolves to one of this host's own addresses", async () => {
  const own = Object.values(networkInterfaces()).flat().find((entry) => entry !== undefined && !entry.internal);
  assert.ok(own, 'this host has a non-loopback interface');
  const result = await runLookup(false, { 'hooks.example.com': [own.address] }, 'hooks.example.com', false);
  assert.equal(result.error?.code, 'EWEBHOOKADDR');
});
