// The client's address, as every part that counts or logs per client sees it: the failed-
// authentication limit, the access log (and the portal's per-address sign-in limit). Without
// TRUST_PROXY it is the socket's peer. When the peer is a trusted proxy, X-Forwarded-For is
// believed, read from the right: each trusted proxy appends the address it received from, so
// the client is the rightmost address that is not itself a trusted proxy. A peer that is not
// trusted cannot choose its address by sending the header.

import type { IncomingMessage } from 'node:http';
import type { AddressRanges } from '../net/address-ranges.ts';
import { parseAddress } from '../net/address-ranges.ts';

export type ClientAddress = (req: IncomingMessage) => string;

/** The function giving a request's client address, trusting X-Forwarded-For from `trusted` peers only. */
export function clientAddressFunction(trusted: AddressRanges): ClientAddress {
  if (trusted.empty) return (req) => req.socket.remoteAddress ?? 'unknown';
  return (req) => {
    const peer = req.socket.remoteAddress ?? 'unknown';
    if (!trusted.includes(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return peer;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let index = hops.length - 1; index >= 0; index -= 1) {
      const hop = hops[index]!.trim();
      // Garbage in the header stops the walk: what is left of it cannot be believed.
      if (parseAddress(hop) === null) return peer;
      if (!trusted.includes(hop)) return hop;
    }
    // Every hop is a trusted proxy: the leftmost is the closest thing to a client.
    return hops[0]!.trim();
  };
}
