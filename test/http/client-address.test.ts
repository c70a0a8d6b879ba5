// clientAddress: addresses and CIDR ranges in both families, and X-Forwarded-For read from the
// right, believed only from a trusted peer.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddressFunction } from '../../src/http/client-address.ts';
import { parseAddressRanges } from '../../src/net/address-ranges.ts';

function fakeRequest(peer: string, forwardedFor?: string): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
}

test('ranges: IPv4 and IPv6 CIDR, single addresses, IPv4-mapped IPv6 peers', () => {
  const ranges = parseAddressRanges(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
  for (const inside of ['10.1.2.3', '::ffff:10.200.0.1', '192.168.1.7', 'fd12:3456::1', '::1', '0:0:0:0:0:0:0:1']) assert.equal(ranges.includes(inside), true, inside);
  for (const outside of ['11.0.0.1', '192.168.1.8', 'fe80::1', '::2', 'not an address', '']) assert.equal(ranges.includes(outside), false, outside);
  assert.throws(() => parseAddressRanges(['10.0.0.0/33']), /prefix/);
  assert.throws(() => parseAddressRanges(['example.com']), /not an address/);
});

test('X-Forwarded-For: believed only from a trusted peer; the client is the rightmost untrusted hop', () => {
  const address = clientAddressFunction(parseAddressRanges(['10.0.0.0/8', 'fd00::/8']));
  assert.equal(address(fakeRequest('203.0.113.5', '198.51.100.1')), '203.0.113.5', 'an untrusted peer cannot choose its address');
  assert.equal(address(fakeRequest('10.0.0.2', '198.51.100.1')), '198.51.100.1');
  assert.equal(address(fakeRequest('::ffff:10.0.0.2', '6.6.6.6, 198.51.100.1, 10.0.0.9')), '198.51.100.1', 'a forged leftmost hop is not believed');
  assert.equal(address(fakeRequest('fd00::2', '2001:db8::1')), '2001:db8::1');
  assert.equal(address(fakeRequest('10.0.0.2')), '10.0.0.2', 'no header: the proxy itself');
  assert.equal(address(fakeRequest('10.0.0.2', 'garbage')), '10.0.0.2', 'an unreadable hop stops the walk');
  const none = clientAddressFunction(parseAddressRanges([]));
  assert.equal(none(fakeRequest('10.0.0.2', '198.51.100.1')), '10.0.0.2', 'without TRUST_PROXY the header is ignored');
});
