// Which area of the server a request target belongs to, read from the raw target before
// anything else is parsed: the area decides the gate, and the gate the context. An area is a
// path prefix and everything below it ("/v1", "/v1/…", "/v1?…", not "/v1x").

export type Area = 'v1' | 'portal' | 'operator' | 'public';

export function areaOf(url: string): Area {
  if (isUnder(url, '/v1')) return 'v1';
  if (isUnder(url, '/portal/v1')) return 'portal';
  if (isUnder(url, '/admin') || isUnder(url, '/metrics', false)) return 'operator';
  return 'public';
}

/** True for `prefix` itself (with or without a query) and, when `withBelow`, any path below it. */
function isUnder(url: string, prefix: string, withBelow = true): boolean {
  if (!url.startsWith(prefix)) return false;
  if (url.length === prefix.length) return true;
  const next = url.charCodeAt(prefix.length);
  return next === QUESTION_MARK || (withBelow && next === SLASH);
}

const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;
