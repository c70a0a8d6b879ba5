// Which gate answers a request is decided by its path's area alone: "/v1", "/portal/v1" and
// "/admin" with anything below them (or a query right after), "/metrics" itself, and everything
// else open. A path that only begins with the same letters ("/v1x", "/adminx", "/metrics/") is
// not in the area. Each answer shows its gate: /v1 asks for a key (401, private), the portal for
// a session (401, no-store), the operator's area for the token (401), the open area has no such
// route (404). All are sent at once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

test('each request target goes to the gate of its area, and only of its area', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const cases: Array<[string, 'v1' | 'portal' | 'operator' | 'open']> = [
    ['/v1', 'v1'],
    ['/v1?page=1', 'v1'],
    ['/v1/listings', 'v1'],
    ['/v1x', 'open'],
    ['/portal/v1/me', 'portal'],
    ['/portal/v1/me?x=1', 'portal'],
    ['/portal/v1x', 'open'],
    ['/admin', 'operator'],
    ['/admin?x=1', 'operator'],
    ['/admin/v1/users', 'operator'],
    ['/adminx', 'open'],
    ['/metrics', 'operator'],
    ['/metrics?x=1', 'operator'],
    ['/metrics/', 'open'],
    ['/no/such/area', 'open'],
  ];
  const answers = await Promise.all(cases.map(([path]) => server.request('GET', path)));
  cases.forEach(([path, area], index) => {
    const answer = answers[index]!;
    const cacheControl = answer.headers.get('cache-control');
    if (area === 'v1') {
      assert.equal(answer.status, 401, path);
      assert.match(answer.body.error, /API key/, path);
      assert.equal(cacheControl, 'private, no-cache', path);
    } else if (area === 'portal') {
      assert.equal(answer.status, 401, path);
      assert.equal(cacheControl, 'no-store', path);
      assert.doesNotMatch(answer.body.error, /API key|operator/i, path);
    } else if (area === 'operator') {
      assert.equal(answer.status, 401, path);
      assert.match(answer.body.error, /operator/i, path);
    } else {
      assert.equal(answer.status, 404, path);
      assert.equal(answer.body.error, `No route GET ${path.split('?')[0]}.`, path);
    }
  });
});
