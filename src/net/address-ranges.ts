// Addresses and CIDR ranges (IPv4 and IPv6) to test addresses against: the proxies named in
// TRUST_PROXY, and the special-purpose ranges no webhook goes to (webhooks/address-guard.ts).
// Addresses are compared as numbers (BigInt), so "::ffff:10.0.0.1" (how Node shows an IPv4
// client on a dual-stack socket) matches 10.0.0.0/8.

import { isIP } from 'node:net';

interface Range {
  /** 4 or 6 */
  family: number;
  base: bigint;
  prefix: number;
}

export class AddressRanges {
  private readonly ranges: Range[];

  constructor(ranges: Range[]) {
    this.ranges = ranges;
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  /** True when `address` lies in one of the ranges. */
  includes(address: string): boolean {
    const parsed = parseAddress(address);
    if (parsed === null) return false;
    for (const range of this.ranges) {
      if (range.family !== parsed.family) continue;
      const bits = parsed.family === 4 ? 32 : 128;
      const shift = BigInt(bits - range.prefix);
      if (parsed.value >> shift === range.base >> shift) return true;
    }
    return false;
  }
}

/** "10.0.0.0/8", "127.0.0.1", "fd00::/8", "::1" → ranges; throws with the entry that is not one. */
export function parseAddressRanges(entries: readonly string[]): AddressRanges {
  return new AddressRanges(
    entries.map((entry) => {
      const [address, prefixText, ...rest] = entry.split('/');
      const parsed = rest.length === 0 && address !== undefined ? parseAddress(address) : null;
      if (parsed === null) throw new Error(`"${entry}" is not an address or CIDR range`);
      const bits = parsed.family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? bits : Number(prefixText);
      if (!/^\d+$/.test(prefixText ?? String(bits)) || prefix > bits) throw new Error(`"${entry}" has a prefix length outside 0-${bits}`);
      return { family: parsed.family, base: parsed.value, prefix };
    }),
  );
}

/** An address as a number with its family; IPv4-mapped IPv6 addresses count as IPv4. Null if not an address. */
export function parseAddress(text: string): { family: number; value: bigint } | null {
  const address = text.trim().replace(/^\[|\]$/g, '');
  const family = isIP(address);
  if (family === 4) return { family: 4, value: ipv4Value(address) };
  if (family !== 6) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { family: 4, value: ipv4Value(mapped[1]!) };
  return { family: 6, value: ipv6Value(address.replace(/%.*$/, '')) };
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Value(address: string): bigint {
  let text = address;
  // A trailing dotted IPv4 part (::1.2.3.4) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4Value(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}
