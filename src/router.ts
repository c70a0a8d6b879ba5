// A router small enough to read in one sitting: parameter-free paths sit in a map, the rest
// are compiled to regular expressions and scanned in order. It also knows which methods a
// path has, for 405 with an Allow header. HEAD is answered by a path's GET route (HTTP asks
// every GET to take HEAD; the server sends the same status and headers without the body).

export interface Routable {
  method: string;
  pattern: string;
}

export type RouteMatch<R> =
  | { kind: 'found'; route: R; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[]; pattern: string }
  | { kind: 'not-found' };

interface PatternEntry<R> {
  regex: RegExp;
  paramNames: string[];
  byMethod: Map<string, R>;
}

export class Router<R extends Routable> {
  private readonly staticPaths = new Map<string, Map<string, R>>();
  private readonly patterns = new Map<string, PatternEntry<R>>();
  private readonly all: R[] = [];

  add(route: R): this {
    this.all.push(route);
    if (!route.pattern.includes(':')) {
      const byMethod = this.staticPaths.get(route.pattern) ?? new Map<string, R>();
      byMethod.set(route.method, route);
      this.staticPaths.set(route.pattern, byMethod);
      return this;
    }
    let entry = this.patterns.get(route.pattern);
    if (!entry) {
      const paramNames: string[] = [];
      const source = route.pattern
        .split('/')
        .map((segment) => {
          if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          paramNames.push(segment.slice(1));
          return '([^/]+)';
        })
        .join('/');
      entry = { regex: new RegExp(`^${source}$`), paramNames, byMethod: new Map() };
      this.patterns.set(route.pattern, entry);
    }
    entry.byMethod.set(route.method, route);
    return this;
  }

  match(method: string, path: string): RouteMatch<R> {
    const staticMethods = this.staticPaths.get(path);
    if (staticMethods) return pick(staticMethods, method, {}, path);
    for (const [pattern, entry] of this.patterns) {
      const found = entry.regex.exec(path);
      if (!found) continue;
      const params: Record<string, string> = {};
      entry.paramNames.forEach((name, index) => {
        params[name] = safeDecode(found[index + 1]!);
      });
      return pick(entry.byMethod, method, params, pattern);
    }
    return { kind: 'not-found' };
  }

  routes(): readonly R[] {
    return this.all;
  }
}

/** The route for `method` among one path's routes; else the methods it has, and its pattern (the label a 405 is counted under). */
function pick<R>(byMethod: Map<string, R>, method: string, params: Record<string, string>, pattern: string): RouteMatch<R> {
  const route = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
  if (route) return { kind: 'found', route, params };
  const allowed: string[] = [];
  for (const known of byMethod.keys()) allowed.push(...(known === 'GET' ? ['GET', 'HEAD'] : [known]));
  return { kind: 'method-not-allowed', allowed, pattern };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
