// Imports point down: every file under src/ belongs to a layer (by its folder, or by name for the
// files at the top of src/), and may import only from its own layer or those below. Two files
// that import each other are refused too, whatever their layers. Type-only imports count: they
// are dependencies of the code's meaning even when nothing of them runs. The handlers sit in one
// folder per surface (v1, admin, public), and none imports another, in any folder. The optional
// modules (src/modules/<name>/) sit above the core: the core never imports them (only the
// composition's loader does), and no module imports another.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { MODULE_NAMES } from '../../src/config.ts';

const SRC = resolve(import.meta.dirname, '../../src');

/**
 * Lowest first. A layer's files may import from any layer at or before it.
 * - foundation: no knowledge of records or requests (clock, addresses, limiters, the router, settings)
 * - store: records in memory and their log
 * - domain: the records' shapes and rules (ids, errors a request is refused with, who sees what)
 * - auth: keys, permissions, the operator token
 * - http: one request: context, bodies, answers
 * - features: listings, analytics, audit, health, metrics, webhooks
 * - resources: the rules of each kind of record (reading a body, deciding a write), with no
 *   request, reply or route in sight; above http because a rule reads a body with http's
 *   BodyChecker, above features because a webhook's rules queue through the outbox
 * - routes: the handlers and the OpenAPI document built from them
 * - assembly: the pipeline (server.ts and its gates in pipeline/), the back-ends chosen from the configuration, demo data, what a module is given (module.ts)
 * - modules: the optional parts (src/modules/<name>/), above the core they use
 * - composition: the core's parts made in order, its routes, the modules loaded and installed
 * - app, then the process entry points
 */
const LAYERS: readonly (readonly string[])[] = [
  ['client', 'clock.ts', 'version.ts', 'net', 'limits', 'router.ts', 'config.ts'],
  ['store'],
  ['domain'],
  ['auth'],
  ['http'],
  ['listings', 'analytics', 'audit', 'health', 'metrics', 'webhooks'],
  ['resources'],
  ['handlers', 'openapi'],
  ['server.ts', 'pipeline', 'backends', 'demo.ts', 'demo-keys.ts', 'banner.ts', 'module.ts'],
  ['modules'],
  ['composition'],
  ['app.ts'],
  ['embed.ts', 'index.ts', 'main.ts', 'cli.ts', 'executable.ts', 'build'],
];


function layerOf(file: string): number {
  const top = file.split('/')[0]!;
  const index = LAYERS.findIndex((names) => names.includes(top));
  if (index === -1) throw new Error(`${file} is in no layer: add "${top}" to LAYERS in ${relative(process.cwd(), import.meta.filename)}`);
  return index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The src-relative files `file` imports (static imports, re-exports and import() of a literal). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  const pattern = /^\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/gm;
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] ?? match[2] ?? match[3]!;
    found.push(relative(SRC, resolve(dirname(file), specifier)));
  }
  return found;
}

const graph = new Map(sourceFiles(SRC).map((path) => [relative(SRC, path), importsOf(path)]));

test('the import scan finds the imports it should (a check on the check)', () => {
  assert.ok(graph.size > 100, `${graph.size} files`);
  assert.ok(graph.get('app.ts')!.includes('server.ts'));
  assert.ok(graph.get('backends/open-backends.ts')!.includes('backends/postgres/postgres-log.ts'), 'a dynamic import counts');
});

test('no file imports from a layer above its own', () => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      const edge = `${file} → ${imported}`;
      if (layerOf(imported) > layerOf(file)) upward.push(edge);
    }
  }
  assert.deepEqual(upward, []);
});

test('no two files import each other', () => {
  const mutual: string[] = [];
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      if (file < imported && graph.get(imported)?.includes(file)) mutual.push(`${file} ↔ ${imported}`);
    }
  }
  assert.deepEqual(mutual, []);
});

/** Every import from one handler file to another, whichever surface folders the two sit in. */
function handlerToHandler(imports: ReadonlyMap<string, readonly string[]>): string[] {
  const sideways: string[] = [];
  for (const [file, imported] of imports) {
    if (!file.startsWith('handlers/')) continue;
    for (const target of imported) if (target.startsWith('handlers/')) sideways.push(`${file} → ${target}`);
  }
  return sideways;
}

test('no handler imports another handler: what two surfaces share is a rule in src/resources', () => {
  // A check on the check: the surface folders are scanned, and an import across them is caught.
  assert.ok(graph.get('handlers/v1/listings.ts')!.includes('resources/listings.ts'));
  assert.deepEqual(handlerToHandler(new Map([['handlers/admin/plans.ts', ['handlers/v1/listings.ts']]])), ['handlers/admin/plans.ts → handlers/v1/listings.ts']);
  assert.deepEqual(handlerToHandler(graph), []);
});

/** Each surface's folder under handlers/, and the route kind (src/http/route.ts) its router holds. */
const SURFACE_ROUTE_KINDS: Readonly<Record<string, string>> = { v1: 'ApiRoute', admin: 'AdminRoute', public: 'PublicRoute' };

test('each handler sits in the folder of the one surface whose routes it returns', () => {
  const misplaced: string[] = [];
  const kindsSeen = new Set<string>();
  for (const file of graph.keys()) {
    if (!file.startsWith('handlers/')) continue;
    const surface = file.split('/')[1]!;
    const expected = SURFACE_ROUTE_KINDS[surface];
    if (expected === undefined || file.split('/').length !== 3) {
      misplaced.push(`${file}: not in one of handlers/${Object.keys(SURFACE_ROUTE_KINDS).join(', handlers/')}`);
      continue;
    }
    // The route kinds the file's functions return (`): ApiRoute[]`, `): PublicRoute {`).
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const [, kind] of text.matchAll(/\):\s*(ApiRoute|PortalRoute|AdminRoute|PublicRoute)\b/g)) {
      kindsSeen.add(kind!);
      if (kind !== expected) misplaced.push(`${file} returns ${kind}, but handlers/${surface}/ holds ${expected}`);
    }
  }
  assert.deepEqual(kindsSeen, new Set(Object.values(SURFACE_ROUTE_KINDS)), 'every route kind is found (a check on the check)');
  assert.deepEqual(misplaced, []);
});

test('no rule sees a request: src/resources imports neither http/context.ts nor http/route.ts', () => {
  const requestTypes = ['http/context.ts', 'http/route.ts'];
  const seen: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith('resources/')) continue;
    for (const imported of imports) if (requestTypes.includes(imported)) seen.push(`${file} → ${imported}`);
  }
  assert.deepEqual(seen, []);
});

/** The file allowed to import the optional modules: the composition's loader. */
const MODULE_LOADERS = ['composition/load-modules.ts'];
/** Where one module needs another, it is said here, as 'importer module → imported module' (none today). */
const MODULE_NEEDS: readonly string[] = [];

/** Every import that breaks the modules' rules: a core file (not a loader) importing a module, or a module importing another. */
function moduleBreaches(imports: ReadonlyMap<string, readonly string[]>): string[] {
  const moduleOf = (file: string) => (file.startsWith('modules/') ? file.split('/')[1]! : null);
  const breaches: string[] = [];
  for (const [file, imported] of imports) {
    for (const target of imported) {
      const from = moduleOf(file);
      const to = moduleOf(target);
      if (to === null || from === to) continue;
      if (from === null && !MODULE_LOADERS.includes(file)) breaches.push(`${file} → ${target} (the core imports a module)`);
      if (from !== null && !MODULE_NEEDS.includes(`${from} → ${to}`)) breaches.push(`${file} → ${target} (a module imports another)`);
    }
  }
  return breaches;
}

test('the core never imports a module (only the composition loads them), and no module imports another', () => {
  // A check on the check: a core file reaching into a module, and a module into another, are caught.
  const probe = new Map([
    ['resources/keys.ts', ['modules/portal/daily-limits.ts']],
    ['modules/moderation/erasure.ts', ['modules/portal/end-access.ts', 'store/store.ts']],
    ['composition/load-modules.ts', ['modules/portal/index.ts']],
    ['webhooks/outbox.ts', ['modules/events/event-log.ts']],
  ]);
  assert.deepEqual(moduleBreaches(probe), [
    'resources/keys.ts → modules/portal/daily-limits.ts (the core imports a module)',
    'modules/moderation/erasure.ts → modules/portal/end-access.ts (a module imports another)',
    'webhooks/outbox.ts → modules/events/event-log.ts (the core imports a module)',
  ]);
  for (const name of MODULE_NAMES) assert.ok(graph.get('composition/load-modules.ts')!.includes(`modules/${name}/index.ts`), `${name} is loaded`);
  assert.deepEqual(moduleBreaches(graph), []);
});
