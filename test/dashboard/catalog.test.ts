// Tiers, permission presets and the as-you-type check of permission entries: the presets grant
// little, every entry they hold is one the server's own checker accepts, and typos are caught.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyRules, type KeyRules } from '../../src/auth/key-rules.ts';
import { checkPermissionEntry as serverCheck, type PermissionRoute } from '../../src/auth/permissions.ts';

interface Preset { id: string; label: string; permissions: readonly string[] }
interface Tier { id: string; label: string; rateLimit: number }
interface CatalogModule {
  TIERS: readonly Tier[];
  PRESETS: readonly Preset[];
  checkPermissionEntry(entry: unknown, rules: KeyRules): string | null;
  parseCustomEntries(text: string, rules: KeyRules): Array<{ entry: string; problem: string | null }>;
  combinePermissions(presetIds: string[], customEntries: string[]): string[];
  tierFor(rateLimit: number): Tier | null;
  checkRateLimit(value: string, rules: KeyRules): string | null;
}

// A plain-JavaScript browser module; loading it by URL keeps the type checker out of it.
const catalog = (await import(new URL('../../src/dashboard/public/catalog.js', import.meta.url).href)) as CatalogModule;
// The rules the page is given: the server's own, as /dashboard/key-rules.js serves them.
const RULES = keyRules();

// The /v1 routes of the specification, as the server's permission checker sees them.
const SPEC_ROUTES: PermissionRoute[] = [
  { method: 'GET', pattern: '/v1/listings', resource: 'listings' },
  { method: 'GET', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'POST', pattern: '/v1/listings', resource: 'listings' },
  { method: 'PUT', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'DELETE', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'GET', pattern: '/v1/users/me', resource: 'users' },
  { method: 'PUT', pattern: '/v1/users/me', resource: 'users' },
  { method: 'GET', pattern: '/v1/users/:id', resource: 'users' },
  { method: 'GET', pattern: '/v1/analytics/usage', resource: 'analytics' },
  { method: 'GET', pattern: '/v1/analytics/listings', resource: 'analytics' },
  { method: 'GET', pattern: '/v1/webhooks', resource: 'webhooks' },
  { method: 'POST', pattern: '/v1/webhooks', resource: 'webhooks' },
  { method: 'DELETE', pattern: '/v1/webhooks/:id', resource: 'webhooks' },
];

test('tiers are Free 100/min, Pro 1,000/min and Business 10,000/min', () => {
  assert.deepEqual(
    catalog.TIERS.map((tier) => [tier.label, tier.rateLimit]),
    [['Free', 100], ['Pro', 1000], ['Business', 10000]],
  );
  assert.equal(catalog.tierFor(1000)?.label, 'Pro');
  assert.equal(catalog.tierFor(250), null);
});

test('a custom rate limit is a whole number from 1 to 1,000,000', async (t) => {
  for (const good of ['1', '250', '1000000', ' 42 ']) {
    await t.test(`rate limit ${JSON.stringify(good)} is accepted`, async () => {
      assert.equal(catalog.checkRateLimit(good, RULES), null, good);
    });
  }
  for (const bad of ['', '0', '1000001', '1.5', '-3', 'abc', '1e3']) {
    await t.test(`rate limit ${JSON.stringify(bad)} is refused`, async () => {
      assert.notEqual(catalog.checkRateLimit(bad, RULES), null, bad);
    });
  }
});

test('every preset entry is accepted by the server\'s own checker', () => {
  for (const preset of catalog.PRESETS) {
    assert.ok(preset.permissions.length > 0, preset.id);
    for (const entry of preset.permissions) {
      assert.equal(catalog.checkPermissionEntry(entry, RULES), null, `${preset.id}: ${entry} (page)`);
      assert.equal(serverCheck(entry, SPEC_ROUTES), null, `${preset.id}: ${entry} (server)`);
    }
  }
});

test('the presets named in the issue exist, and read-only browse can only read', () => {
  const labels = catalog.PRESETS.map((preset) => preset.label);
  for (const wanted of ['Read-only browse', 'Creator: manage own listings', 'Webhooks']) assert.ok(labels.includes(wanted), wanted);
  const browse = catalog.PRESETS.find((preset) => preset.id === 'browse')!;
  for (const entry of browse.permissions) assert.match(entry, /^(read:|GET )/, entry);
  const webhooks = catalog.PRESETS.find((preset) => preset.id === 'webhooks')!;
  for (const entry of webhooks.permissions) assert.match(entry, /webhooks/, 'the webhooks preset touches nothing else');
});

test('well-formed entries pass the as-you-type check', async (t) => {
  for (const entry of ['read:listings', 'write:webhooks', 'read:analytics', 'GET /v1/listings', 'PUT /v1/listings/:id', 'GET /v1/listings/*', 'DELETE /v1/webhooks/:id', 'GET /v1/listings/lst_123']) {
    await t.test(entry, async () => {
      assert.equal(catalog.checkPermissionEntry(entry, RULES), null, entry);
    });
  }
});

test('malformed entries are refused with a reason a person can act on', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['read:cats', /unknown resource "cats"/],
    ['delete:listings', /expected read:<resource>/],
    ['get /v1/listings', /capitals/],
    ['GET /listings', /start with \/v1/],
    ['OPTIONS /v1/listings', /unknown method OPTIONS/],
    ['GET /v1/listings?limit=5', /expected/],
    ['GET /v1/listings/**', /expected/],
    ['GET', /expected/],
    ['<script>', /expected/],
    ['', /empty/],
  ];
  for (const [entry, reason] of cases) {
    await t.test(entry, async () => {
      assert.match(catalog.checkPermissionEntry(entry, RULES) ?? 'accepted', reason, entry);
    });
  }
});

test('whatever the page accepts has the shape the server accepts', async (t) => {
  // The page knows no routes, so it cannot refuse a route that does not exist; the server does.
  const sample = ['read:users', 'write:users', 'GET /v1/users/me', 'POST /v1/webhooks', 'GET /v1/listings/*', 'DELETE /v1/listings/:id'];
  for (const entry of sample) {
    assert.equal(catalog.checkPermissionEntry(entry, RULES), null, entry);
    assert.equal(serverCheck(entry, SPEC_ROUTES), null, entry);
  }
  // Well-formed but granting nothing: the page lets it through, the server names the problem.
  for (const [entry, reason] of [['GET /v1/webhooks/*', /no GET route lies under/], ['GET /v1/nothing', /no route GET \/v1\/nothing/], ['PATCH /v1/listings/:id', /no route PATCH/]] as const) {
    await t.test(entry, async () => {
      assert.equal(catalog.checkPermissionEntry(entry, RULES), null, entry);
      assert.match(serverCheck(entry, SPEC_ROUTES) ?? '', reason, entry);
    });
  }
  for (const entry of ['read:cats', 'GET /listings', 'GET /v1/listings?x=1']) {
    await t.test(entry, async () => {
      assert.notEqual(catalog.checkPermissionEntry(entry, RULES), null, entry);
      assert.notEqual(serverCheck(entry, SPEC_ROUTES), null, entry);
    });
  }
});

test('custom entries: one per line or comma-separated, trimmed, blank lines ignored', () => {
  const parsed = catalog.parseCustomEntries('  GET   /v1/listings/:id \n\n read:cats, write:webhooks\n', RULES);
  assert.deepEqual(parsed, [
    { entry: 'GET /v1/listings/:id', problem: null },
    { entry: 'read:cats', problem: 'unknown resource "cats" (known: listings, users, analytics, webhooks)' },
    { entry: 'write:webhooks', problem: null },
  ]);
  assert.deepEqual(catalog.parseCustomEntries('\n  \n', RULES), []);
});

test('presets and custom entries combine without duplicates, in order', () => {
  assert.deepEqual(catalog.combinePermissions(['browse', 'creator'], ['read:listings', 'GET /v1/webhooks']), [
    'read:listings',
    'GET /v1/users/:id',
    'write:listings',
    'GET /v1/users/me',
    'GET /v1/analytics/listings',
    'GET /v1/webhooks',
  ]);
  assert.deepEqual(catalog.combinePermissions([], []), []);
});
