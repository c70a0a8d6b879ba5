// Keeps webhook deliveries off loopback, private, link-local, metadata and other reserved
// addresses (SSRF). URLs are checked when registered, and every address a name resolves to is
// checked again on the connection's own DNS look-up, so a name that later points inward
// (DNS rebinding) is still refused.

import dns from 'node:dns';
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';

const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** The shape of `dns.lookup` asked for every address; tests pass a stub of this. */
export type BaseLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

// ---- IPv4 ----

function parseIpv4(text: string): number | null {
  if (isIP(text) !== 4) return null;
  // isIP accepts only four plain decimal octets, so Number() reads each one as written.
  return text.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

interface Ipv4Range {
  base: number;
  mask: number;
}

function ipv4Range(cidr: string): Ipv4Range {
  const [address = '', bits = ''] = cidr.split('/');
  const base = parseIpv4(address);
  const prefixLength = Number(bits);
  if (base === null) throw new Error(`bad IPv4 range ${cidr}`);
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  return { base, mask };
}

const FORBIDDEN_IPV4 = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on many systems
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, including the cloud metadata service 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including broadcast 255.255.255.255
].map(ipv4Range);

function isForbiddenIpv4(address: number): boolean {
  return FORBIDDEN_IPV4.some((range) => ((address & range.mask) >>> 0) === ((range.base & range.mask) >>> 0));
}

// ---- IPv6 ----

/** Eight 16-bit groups, or null. Accepts `::` shorthand, a dotted IPv4 tail and a `%zone`. */
function parseIpv6(text: string): number[] | null {
  let address = text.split('%')[0] ?? '';
  if (isIP(address) !== 6) return null;

  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (tail.includes('.')) {
    const embedded = parseIpv4(tail);
    if (embedded === null) return null;
    address = `${address.slice(0, lastColon + 1)}${(embedded >>> 16).toString(16)}:${(embedded & 0xffff).toString(16)}`;
  }

  const halves = address.split('::');
  if (halves.length > 2) return null;
  const readGroups = (part: string | undefined): number[] =>
    part === undefined || part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const head = readGroups(halves[0]);
  const rest = readGroups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

interface Ipv6Range {
  groups: number[];
  prefixLength: number;
}

function ipv6Range(cidr: string): Ipv6Range {
  const [address = '', bits = ''] = cidr.split('/');
  const groups = parseIpv6(address);
  if (groups === null) throw new Error(`bad IPv6 range ${cidr}`);
  return { groups, prefixLength: Number(bits) };
}

function inIpv6Range(groups: number[], range: Ipv6Range): boolean {
  let remainingBits = range.prefixLength;
  for (let index = 0; remainingBits > 0; index += 1, remainingBits -= 16) {
    const mask = remainingBits >= 16 ? 0xffff : (0xffff << (16 - remainingBits)) & 0xffff;
    if (((groups[index] ?? 0) & mask) !== ((range.groups[index] ?? 0) & mask)) return false;
  }
  return true;
}

const FORBIDDEN_IPV6 = [
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // old site-local
  'ff00::/8', // multicast
  '64:ff9b::/96', // NAT64: a translator would carry us to whatever IPv4 address is inside
  '64:ff9b:1::/48', // local-use NAT64
].map(ipv6Range);

/** Ranges that carry an IPv4 address inside: judged by that address. */
const IPV4_CARRYING_IPV6 = [
  { range: ipv6Range('::/96'), firstGroup: 6 }, // IPv4-compatible; also :: and ::1
  { range: ipv6Range('::ffff:0:0/96'), firstGroup: 6 }, // IPv4-mapped
  { range: ipv6Range('::ffff:0:0:0/96'), firstGroup: 6 }, // IPv4-translated (SIIT)
  { range: ipv6Range('2002::/16'), firstGroup: 1 }, // 6to4
];

function isForbiddenIpv6(groups: number[]): boolean {
  if (FORBIDDEN_IPV6.some((range) => inIpv6Range(groups, range))) return true;
  for (const { range, firstGroup } of IPV4_CARRYING_IPV6) {
    if (!inIpv6Range(groups, range)) continue;
    const embedded = ((groups[firstGroup] ?? 0) * 0x10000 + (groups[firstGroup + 1] ?? 0)) >>> 0;
    return isForbiddenIpv4(embedded);
  }
  return false;
}

/**
 * True when a delivery must not go to this IP address. Anything that is not an IP address
 * counts as forbidden, so a surprise never opens the door.
 * @example isForbiddenAddress('169.254.169.254') // true
 */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const ipv4 = parseIpv4(bare);
  if (ipv4 !== null) return isForbiddenIpv4(ipv4);
  const ipv6 = parseIpv6(bare);
  if (ipv6 !== null) return isForbiddenIpv6(ipv6);
  return true;
}

// ---- URLs ----

function isLocalhostName(hostname: string): boolean {
  const name = hostname.replace(/\.+$/, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Checks a webhook URL as it is registered. Names other than localhost are checked later, on
 * the addresses they resolve to (see `guardedLookup`).
 * @example validateWebhookUrl('http://0x7f000001/', false) // { ok: false, reason: … }
 */
export function validateWebhookUrl(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'URL is not valid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'URL must use http or https' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'URL must not contain a user name or password' };
  if (url.hostname === '') return { ok: false, reason: 'URL must have a host' };
  if (allowPrivate) return { ok: true, url };

  // WHATWG parsing has already turned 2130706433, 0x7f000001 and 0177.0.0.1 into 127.0.0.1.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0 && isForbiddenAddress(host)) {
    return { ok: false, reason: 'URL points to a private, loopback or reserved address' };
  }
  if (isLocalhostName(host)) return { ok: false, reason: 'URL points to localhost' };
  return { ok: true, url };
}

/** The error a refused address produces, recognisable by its code. */
export class WebhookAddressError extends Error {
  readonly code = 'EWEBHOOKADDR';
  readonly hostname: string;
  readonly address: string;

  constructor(hostname: string, address: string) {
    super(`webhook host ${hostname} resolves to ${address}, a private, loopback or reserved address`);
    this.name = 'WebhookAddressError';
    this.hostname = hostname;
    this.address = address;
  }
}

/**
 * A `lookup` for `http.request` that resolves with `baseLookup` and refuses the connection
 * when any address is forbidden, so the check applies to the address actually dialled.
 * @example http.request(url, { lookup: guardedLookup(false) })
 */
export function guardedLookup(allowPrivate: boolean, baseLookup: BaseLookup = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    // Every address is resolved and checked, even when the caller wants one: a name with one
    // public and one private address is refused rather than left to chance.
    baseLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        const notFound: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
        notFound.code = 'ENOTFOUND';
        callback(notFound, []);
        return;
      }
      const refused = allowPrivate ? undefined : addresses.find((entry) => isForbiddenAddress(entry.address));
      if (refused !== undefined) {
        callback(new WebhookAddressError(hostname, refused.address), []);
        return;
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
