// Keeps webhook deliveries off every IANA special-purpose address (loopback, private,
// link-local, metadata, documentation, benchmarking, reserved, the IPv6 forms that carry an
// IPv4 address) and off the host's own interface addresses (SSRF). URLs are checked when
// registered, and every address a name resolves to is checked again on the connection's own
// DNS look-up, so a name that later points inward (DNS rebinding) is still refused.

import dns from 'node:dns';
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { LookupFunction } from 'node:net';
import { parseAddress, parseAddressRanges } from '../net/address-ranges.ts';

const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** The shape of `dns.lookup` asked for every address; tests pass a stub of this. */
export type BaseLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

// ---- the ranges ----

/**
 * The IANA special-purpose registries, every entry of both (a receiver on the Internet has none
 * of these addresses). The IPv6 forms that carry an IPv4 address (mapped, compatible,
 * translated, NAT64, 6to4) are refused whatever is inside: a translator or a dual-stack socket
 * would take the connection somewhere the IPv4 rules never saw, and a real receiver publishes a
 * plain address.
 */
const FORBIDDEN_RANGES = parseAddressRanges([
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on many systems
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, including the cloud metadata service 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1 (documentation)
  '192.31.196.0/24', // AS112
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // the old 6to4 relay anycast
  '192.168.0.0/16',
  '192.175.48.0/24', // AS112 direct delegation
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2 (documentation)
  '203.0.113.0/24', // TEST-NET-3 (documentation)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including broadcast 255.255.255.255
  '::/96', // unspecified ::, loopback ::1 and the deprecated IPv4-compatible form
  '::ffff:0:0/96', // IPv4-mapped
  '::ffff:0:0:0/96', // IPv4-translated (SIIT)
  '64:ff9b::/96', // NAT64: a translator would carry us to whatever IPv4 address is inside
  '64:ff9b:1::/48', // local-use NAT64
  '100::/64', // discard-only
  '2001::/23', // IETF protocol assignments: Teredo, benchmarking, ORCHID, …
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4
  '2620:4f:8000::/48', // AS112 direct delegation
  '3fff::/20', // documentation
  '5f00::/16', // segment routing (SRv6) identifiers
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // old site-local
  'ff00::/8', // multicast
]);

// ---- the host's own addresses ----

/** The shape of `os.networkInterfaces()`; tests pass their own list. */
export type InterfaceList = NodeJS.Dict<{ address: string }[]>;

/** One spelling per address, so `::FFFF:0:1` and `::ffff:0.0.0.1` compare equal. */
function canonicalAddress(ip: string): string | null {
  const parsed = parseAddress(ip);
  return parsed === null ? null : `${parsed.family}:${parsed.value}`;
}

/**
 * True when `ip` is one of this host's interface addresses, public ones included: a delivery
 * there would reach services listening on the server's own machine.
 */
export function isOwnAddress(ip: string, interfaces: InterfaceList = networkInterfaces()): boolean {
  const wanted = canonicalAddress(ip);
  if (wanted === null) return false;
  for (const entries of Object.values(interfaces)) {
    for (const entry of entries ?? []) if (canonicalAddress(entry.address) === wanted) return true;
  }
  return false;
}

/**
 * True when a delivery must not go to this IP address: a special-purpose range or one of the
 * host's own addresses. Anything that is not an IP address counts as forbidden, so a surprise
 * never opens the door.
 * @example isForbiddenAddress('169.254.169.254') // true
 */
export function isForbiddenAddress(ip: string, interfaces?: InterfaceList): boolean {
  const parsed = parseAddress(ip);
  if (parsed === null) return true;
  // parseAddress reads the mapped form ::ffff:a.b.c.d as the IPv4 address inside; refused as any mapped form is.
  if (parsed.family === 4 && ip.includes(':')) return true;
  return FORBIDDEN_RANGES.includes(ip) || isOwnAddress(ip, interfaces);
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
    return { ok: false, reason: "URL points to a private, loopback, reserved or this server's own address" };
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
    super(`webhook host ${hostname} resolves to ${address}, a private, loopback, reserved or this server's own address`);
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
