// The few HTTP calls the benchmark makes itself (not under load): make keys through the
// operator API, read the store counters, fetch one answer to learn its size and check it.

export interface ApiAnswer {
  status: number;
  body: string;
  headers: Headers;
}

export async function request(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<ApiAnswer> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Makes an `mk_` key for the seeded creator through POST /admin/v1/keys and returns the key string. */
export async function createKey(baseUrl: string, adminToken: string, name: string, rateLimit: number): Promise<string> {
  const answer = await request(`${baseUrl}/admin/v1/keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}` },
    body: { user_id: 'usr_bench', name, permissions: ['read:listings', 'write:listings'], rate_limit: rateLimit, prefix: 'mk' },
  });
  const key = answer.status === 201 ? (JSON.parse(answer.body) as { data?: { key?: unknown } }).data?.key : undefined;
  if (typeof key !== 'string') throw new Error(`POST /admin/v1/keys answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return key;
}

/** GET /admin/v1/stats → its `data`, or null when the server has no such endpoint. */
export async function readStats(baseUrl: string, adminToken: string): Promise<Record<string, unknown> | null> {
  const answer = await request(`${baseUrl}/admin/v1/stats`, { headers: { Authorization: `Bearer ${adminToken}` } });
  if (answer.status !== 200) return null;
  const data = (JSON.parse(answer.body) as { data?: unknown }).data;
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : null;
}

/** Every numeric leaf that changed between two stats snapshots, as "store.fsyncs": delta. */
export function statsDelta(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Record<string, number> {
  const delta: Record<string, number> = {};
  const walk = (left: unknown, right: unknown, path: string): void => {
    if (typeof left === 'number' && typeof right === 'number') {
      if (right !== left) delta[path] = right - left;
    } else if (typeof left === 'object' && left !== null && typeof right === 'object' && right !== null && !Array.isArray(right)) {
      for (const name of Object.keys(right)) {
        walk((left as Record<string, unknown>)[name], (right as Record<string, unknown>)[name], path === '' ? name : `${path}.${name}`);
      }
    }
  };
  walk(before, after, '');
  return delta;
}
