// Which area of the server a request target belongs to, read from the raw target before
// anything else is parsed: the area decides the gate, and the gate the context. An area is a
// path prefix and everything below it ("/v1", "/v1/…", "/v1?…", not "/v1x"). The core has three
// (/v1, the admin API's /admin and /metrics, and everything else); a module may add its own (the
// portal's /portal/v1), looked at after /v1 and before the admin API's.

export type CoreArea = 'v1' | 'admin' | 'public';

/** A module's area: its prefix, and the index of its gate in the listener's table. */
export interface ModuleArea {
  prefix: string;
}

/** The area of `url`: a core one, or the index of the module area (in `moduleAreas`) it falls under. */
export function areaOf(url: string, moduleAreas: readonly ModuleArea[] = []): CoreArea | number {
  if (isUnder(url, '/v1')) return 'v1';
  for (let index = 0; index < moduleAreas.length; index++) if (isUnder(url, moduleAreas[index]!.prefix)) return index;
  if (isUnder(url, '/admin') || isUnder(url, '/metrics', false)) return 'admin';
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
