// The small server inside: with MARKETPLACE_MODULES=none a server loads none of src/modules/,
// serves the spec's API, the operator API, webhooks and analytics (their tests pass again in
// that mode), answers 404 where the portal and dashboard were, and documents only what it
// serves; an unknown module name stops the start with a clear message.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { measureLoadedLines } from '../../bench/loaded-lines.ts';
import { loadConfig, MODULE_NAMES } from '../../src/config.ts';
import { startServer } from '../helpers/server.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** What a spawned command ended with, and what it printed. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // Not as a child of this test run: a nested `node --test` would report to it instead of exiting with its own result.
    const { NODE_TEST_CONTEXT: _parent, ...inherited } = process.env;
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

test('MARKETPLACE_MODULES: all by default, none, a list in install order; an unknown name, or a module without one it needs, is a configuration error naming it', () => {
  assert.deepEqual(loadConfig({}).modules, ['portal', 'dashboard', 'search', 'moderation', 'events', 'metrics', 'plans', 'webhook-tools', 'cpu-budget', 'compression', 'idempotency']);
  assert.deepEqual(loadConfig({ MARKETPLACE_MODULES: 'all' }).modules, ['portal', 'dashboard', 'search', 'moderation', 'events', 'metrics', 'plans', 'webhook-tools', 'cpu-budget', 'compression', 'idempotency']);
  assert.deepEqual(loadConfig({ MARKETPLACE_MODULES: 'none' }).modules, []);
  assert.deepEqual(loadConfig({ MARKETPLACE_MODULES: ' plans, moderation , Portal' }).modules, ['portal', 'moderation', 'plans']);
  assert.deepEqual(loadConfig({ MARKETPLACE_MODULES: 'plans' }).modules, ['plans']);
  assert.throws(() => loadConfig({ MARKETPLACE_MODULES: 'portal,forum' }), /MARKETPLACE_MODULES names "forum", which is not a module: use all, none, or a comma list of portal, dashboard, search, moderation, events, metrics, plans, webhook-tools, cpu-budget, compression, idempotency/);
  assert.throws(() => loadConfig({ MARKETPLACE_MODULES: 'portal,dashboard' }), /MARKETPLACE_MODULES names portal, which needs plans: add plans to the list, or leave portal out/);
});

test('an unknown module name stops the real process before it listens, with one line saying which', async () => {
  const { code, stdout, stderr } = await run(['--import', 'tsx', 'src/main.ts'], { PORT: '0', DATA_DIR: ':memory:', MARKETPLACE_MODULES: 'portal,forum' });
  assert.equal(code, 1);
  assert.doesNotMatch(stdout, /listening/);
  assert.match(stderr, /^configuration error: MARKETPLACE_MODULES names "forum", which is not a module/);
});

test('with no modules: /portal, /portal/v1 and /dashboard answer 404; the API, operator API, webhooks and analytics answer', async (t) => {
  const server = await startServer(t, { env: { MARKETPLACE_MODULES: 'none' } });
  for (const path of ['/portal', '/portal/', '/dashboard', '/dashboard/app.js', '/dashboard/portal.js']) {
    assert.equal((await server.request('GET', path)).status, 404, path);
  }
  assert.equal((await server.request('GET', '/portal/v1/settings')).status, 404);
  assert.equal((await server.request('POST', '/portal/v1/session', { body: { email: 'a@example.com', password: 'x' }, headers: { origin: server.url } })).status, 404);
  assert.equal((await server.admin('POST', '/admin/v1/users/usr_x/suspend', { reason: 'no' })).status, 404, 'moderation is a module');
  for (const [method, path] of [['GET', '/admin/v1/plans'], ['GET', '/admin/v1/plan-requests'], ['POST', '/admin/v1/plan-requests/prq_x/approve'], ['POST', '/admin/v1/keys/key_x/quota']] as const) {
    assert.equal((await server.admin(method, path, method === 'POST' ? {} : undefined)).status, 404, `${method} ${path}: plans is a module`);
  }
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks', 'read:analytics']);
  const auth = { authorization: `Bearer ${key}` };
  const created = await server.request('POST', '/v1/listings', { headers: auth, body: { title: 'Small', description: 'Served by the core alone', type: 'SKILL', price: 1 } });
  assert.equal(created.status, 201);
  assert.equal((await server.request('GET', '/v1/listings?q=small', { headers: auth })).body.data.length, 1);
  const webhook = await server.request('POST', '/v1/webhooks', { headers: auth, body: { url: 'https://example.com/hook', events: ['listing.created'] } });
  assert.equal(webhook.status, 201);
  // Running a webhook is the webhook-tools module's: its routes are not served (DELETE still is, so PATCH is 405).
  const running = `/v1/webhooks/${webhook.body.data.id}`;
  assert.equal((await server.request('PATCH', running, { headers: auth, body: { enabled: false } })).status, 405);
  assert.equal((await server.request('POST', `${running}/rotate-secret`, { headers: auth, body: {} })).status, 404);
  assert.equal((await server.request('POST', `${running}/recover`, { headers: auth, body: { since: new Date().toISOString() } })).status, 404);
  assert.equal((await server.request('GET', '/v1/analytics/usage', { headers: auth })).status, 200);
  assert.equal((await server.admin('GET', '/admin/v1/stats')).status, 200);
});

test('without plans a key is on no plan, metered alone against its own rate_limit, with no quota; with plans a user\'s keys on a plan share one window', async (t) => {
  for (const [modules, shared] of [['none', false], ['all', true]] as const) {
    const server = await startServer(t, { env: { MARKETPLACE_MODULES: modules } });
    const user = await server.createUser({ role: 'member', name: 'Two keys' });
    // Keys made with neither plan nor rate_limit: the entry plan (Free, 100), or with no plans the default limit (100) and no plan.
    const first = await server.createKey(user.id, { permissions: ['read:listings'] });
    const second = await server.createKey(user.id, { permissions: ['read:listings'] });
    assert.deepEqual([first.plan, first.rate_limit], [shared ? 'free' : null, 100], modules);
    await server.request('GET', '/v1/listings', { headers: { authorization: `Bearer ${first.key}` } });
    const answer = await server.request('GET', '/v1/listings', { headers: { authorization: `Bearer ${second.key}` } });
    assert.equal(answer.headers.get('x-ratelimit-remaining'), shared ? '98' : '99', `${modules}: the second key's window`);
    assert.equal(answer.headers.get('x-quota-limit'), null);
    const onPlan = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, plan: 'pro' });
    assert.equal(onPlan.status, shared ? 201 : 400, `${modules}: a key asked on a plan`);
    if (!shared) assert.match(onPlan.body.error, /plan is not a field \(this server has no plans: send rate_limit\)/);
    assert.equal((await server.admin('PATCH', `/admin/v1/keys/${first.id}`, { plan: 'pro' })).status, shared ? 200 : 400, `${modules}: a key moved to a plan`);
  }
});

test('with no modules the OpenAPI document holds only what is served; with all of them, the modules\' parts too', async (t) => {
  const none = await startServer(t, { env: { MARKETPLACE_MODULES: 'none' } });
  const all = await startServer(t, { env: { MARKETPLACE_MODULES: 'all' } });
  const small = (await none.request('GET', '/openapi.json')).body;
  const full = (await all.request('GET', '/openapi.json')).body;
  const served = new Set([...none.app.apiRoutes, ...none.app.adminRoutes, ...none.app.publicRoutes].map((route) => `${route.method} ${route.pattern.replace(/:([A-Za-z_]+)/g, '{$1}')}`));
  const documented = Object.entries(small.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  assert.deepEqual(new Set(documented), served);
  assert.ok(!documented.some((operation) => operation.includes('/portal')));
  assert.ok(!documented.includes('POST /admin/v1/users/{id}/suspend'));
  assert.ok(!documented.some((operation) => operation.includes('/plan') || operation.endsWith('/quota')));
  assert.deepEqual(small.tags.map((tag: { name: string }) => tag.name), ['listings', 'users', 'analytics', 'webhooks', 'operator', 'service']);
  assert.equal(small.components.securitySchemes.sessionCookie, undefined);
  // Nor what modules add to every route or answer: Idempotency-Key on POSTs, compression.
  const idempotencyKeyOn = (document: any) => (document.paths['/v1/listings'].post.parameters ?? []).some((parameter: { name?: string }) => parameter.name === 'Idempotency-Key');
  assert.deepEqual([idempotencyKeyOn(small), idempotencyKeyOn(full)], [false, true]);
  assert.doesNotMatch(small.info.description, /compressed/);
  assert.match(full.info.description, /compressed/);
  assert.ok(full.paths['/portal/v1/session'] && full.paths['/admin/v1/users/{id}/suspend'] && full.components.securitySchemes.sessionCookie);
  // Schemas only where something served refers to them; events and promises only of what is sent.
  for (const document of [small, full]) {
    const text = JSON.stringify({ paths: document.paths, webhooks: document.webhooks, schemas: document.components.schemas });
    for (const name of Object.keys(document.components.schemas)) assert.ok(text.includes(`"#/components/schemas/${name}"`), `the schema ${name} is referred to`);
  }
  for (const name of ['Plan', 'PlanInput', 'Event', 'EventPage']) {
    assert.equal(small.components.schemas[name], undefined, `no ${name} schema with none`);
    assert.ok(full.components.schemas[name], `the ${name} schema with all`);
  }
  assert.deepEqual(Object.keys(small.webhooks), ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping']);
  assert.ok(['quota.warning', 'quota.exhausted', 'key.expiring', 'plan_request.decided'].every((type) => type in full.webhooks));
  assert.doesNotMatch(small.info.description, /X-Quota|plan/);
  assert.match(full.info.description, /X-Quota-Limit/);
});

test('a module left out is never loaded: with none, no file of src/modules/ runs, and fewer lines load than with all', async (t) => {
  const none = await measureLoadedLines('none');
  const all = await measureLoadedLines('all');
  assert.deepEqual(none.list.filter((entry) => entry.file.startsWith('modules/')), []);
  for (const name of MODULE_NAMES) assert.ok(all.list.some((entry) => entry.file.startsWith(`modules/${name}/`)), `${name} loads by default`);
  assert.ok(none.lines < all.lines, `${none.lines} lines with none, ${all.lines} with all`);
  t.diagnostic(`src lines loaded: ${none.lines} with MARKETPLACE_MODULES=none (${none.files} files), ${all.lines} with all (${all.files} files)`);
});

test('the core\'s own tests pass again with every module left out', { timeout: 600_000 }, async () => {
  const files = ['test/foundation/operator.test.ts', 'test/webhooks/http.test.ts', 'test/analytics/http.test.ts', 'test/users/users.test.ts', 'test/gate/authentication.test.ts', 'test/gate/rate-limits.test.ts', 'test/listings/lifecycle.test.ts', 'test/listings/lists.test.ts', 'test/listings/validation.test.ts'];
  const { code, stdout, stderr } = await run(['--import', 'tsx', '--test', '--test-reporter=tap', ...files], { MARKETPLACE_TEST_MODULES: 'none' });
  assert.equal(code, 0, `${stdout}\n${stderr}`.slice(-4000));
  const passed = Number(/^# pass (\d+)$/m.exec(stdout)?.[1]);
  assert.ok(passed > 200, `${passed} tests passed`);
  assert.match(stdout, /^# fail 0$/m);
});
