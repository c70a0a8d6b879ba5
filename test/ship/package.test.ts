// The npm package as a stranger gets it: `npm pack` on a copy of the sources (its prepack build
// runs), the tarball's contents, then a fresh project that installs the tarball offline (it has
// no runtime dependencies), type-checks a consumer under `strict` + `module: NodeNext` against
// the package's .d.ts files, and runs it: an embedded server, a listing made with a demo key and
// read back with the client. Also the installed `marketplace` command and a bare copy of dist/.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
// Child processes without the coverage collector's variable: their files are not this suite's.
const childEnv = { ...process.env };
delete childEnv.NODE_V8_COVERAGE;
const run = (file: string, args: string[], options: { cwd?: string; timeout?: number; maxBuffer?: number } = {}) => execFileAsync(file, args, { ...options, env: childEnv });
const root = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: object };
const tsc = join(root, 'node_modules/typescript/bin/tsc');
// Folders of the working copy that are outputs or machine-local, never sources.
const NOT_SOURCES = new Set(['node_modules', 'dist', 'coverage', '.git', '.tmp', 'bench/results', 'test/artifacts']);

const CONSUMER = `
import { ConfigError, startServer, type DemoKey, type RunningServer, type StartServerOptions } from 'marketplace-api';
import { AdminClient, MarketplaceApiError, MarketplaceClient, type Listing } from 'marketplace-api/client';

const options: StartServerOptions = { demo: true, accessLog: false };
const server: RunningServer = await startServer(options);
try {
  const creator: DemoKey | undefined = server.demoKeys.find((demo) => demo.role === 'creator');
  if (creator === undefined) throw new Error('no demo creator key');
  const client = new MarketplaceClient({ baseUrl: server.url, apiKey: creator.key });
  const created: Listing = await client.listings.create({ title: 'From the package', type: 'PROMPT', price: 1.5, tags: ['npm'] });
  const read: Listing = await client.listings.get(created.id);
  const admin = new AdminClient({ baseUrl: server.url, token: server.adminToken });
  const users = await admin.users.list();
  let missing = 0;
  try {
    await client.listings.get('lst_doesnotexist00000000');
  } catch (error) {
    if (error instanceof MarketplaceApiError) missing = error.status;
  }
  let configError = '';
  try {
    await startServer({ brand: 'Not A Brand' });
  } catch (error) {
    if (error instanceof ConfigError) configError = error.name;
  }
  console.log(JSON.stringify({ id: created.id, title: read.title, price: read.price, users: users.pagination.total, missing, configError }));
} finally {
  await server.close();
}
`;

// Wrong on purpose: a real type-check refuses it.
const WRONG_CONSUMER = `
import { startServer } from 'marketplace-api';
import { MarketplaceClient } from 'marketplace-api/client';
const server = await startServer({ port: 'eighty' });
const client = new MarketplaceClient({ baseUrl: server.url, apiKey: server.demoKeys[0].key });
await client.listings.create({ title: 42, type: 'SOMETHING', price: 1 });
`;

test('npm pack → install into a fresh project → a strict NodeNext consumer compiles and runs', { timeout: 600_000 }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'marketplace-package-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));

  // A copy of the sources, so packing (which rebuilds dist/) never touches this working copy.
  const source = join(work, 'source');
  cpSync(root, source, { recursive: true, filter: (path) => !NOT_SOURCES.has(relative(root, path)) && !relative(root, path).startsWith('data/') });
  // A used checkout has data in data/; none of it may ship.
  mkdirSync(join(source, 'data'), { recursive: true });
  writeFileSync(join(source, 'data/marketplace.log'), '{"a record that must never ship"}\n');
  symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'), 'dir');
  await run('npm', ['pack', '--pack-destination', work], { cwd: source, timeout: 480_000, maxBuffer: 64 * 1024 * 1024 });
  const tarball = join(work, `${manifest.name}-${manifest.version}.tgz`);

  const { stdout: listing } = await run('tar', ['-tzf', tarball]);
  const files = listing.trim().split('\n').map((line) => line.replace(/^package\//, ''));
  t.diagnostic(`the tarball holds ${files.length} files, ${(statSync(tarball).size / 1024).toFixed(0)} KiB`);
  for (const expected of ['package.json', 'README.md', 'LICENSE', '.env.example', 'dist/package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/client/index.js', 'dist/client/index.d.ts', 'dist/cli.js', 'dist/main.js', 'dist/dashboard/public/index.html']) {
    await t.test(`${expected} is in the tarball`, async () => {
      assert.ok(files.includes(expected), `${expected} is in the tarball`);
    });
  }
  for (const folder of ['test/', 'bench/', 'data/', 'src/', 'dist/sea/']) {
    await t.test(`nothing of ${folder}`, async () => {
      assert.deepEqual(files.filter((file) => file.startsWith(folder)), [], `nothing of ${folder} in the tarball`);
    });
  }
  assert.deepEqual(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')), [], 'no TypeScript sources');
  assert.ok(!files.includes('dist/marketplace'), 'not the single executable');
  assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');

  // Every declaration imports .js paths, as a consumer's NodeNext resolution expects.
  const unpacked = join(work, 'unpacked');
  mkdirSync(unpacked);
  await run('tar', ['-xzf', tarball, '-C', unpacked]);
  const declarations = files.filter((file) => file.endsWith('.d.ts'));
  for (const file of declarations) {
    assert.doesNotMatch(readFileSync(join(unpacked, 'package', file), 'utf8'), /from\s+['"]\.{1,2}\/[^'"]*\.ts['"]/, file);
  }
  assert.deepEqual(JSON.parse(readFileSync(join(unpacked, 'package/dist/package.json'), 'utf8')).type, 'module');

  // A fresh project, installed offline: the tarball needs nothing from a registry.
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: consumer, timeout: 120_000 });
  assert.deepEqual(readdirSync(join(consumer, 'node_modules')).filter((name) => !name.startsWith('.')), ['marketplace-api']);

  const compilerOptions = {
    strict: true,
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    target: 'ES2022',
    lib: ['ES2022'],
    skipLibCheck: false,
    // A Node project has @types/node; this one borrows the repository's instead of downloading it.
    typeRoots: [join(root, 'node_modules/@types')],
    types: ['node'],
    outDir: 'out',
  };
  // One compilation of both files: the consumer compiles clean, the wrong one is refused, so the
  // types are real (not \`any\`). tsc still emits JavaScript for the clean file.
  writeFileSync(join(consumer, 'consumer.ts'), CONSUMER);
  writeFileSync(join(consumer, 'wrong.ts'), WRONG_CONSUMER);
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts', 'wrong.ts'] }));
  const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, timeout: 240_000 }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  const problems = compiled.split('\n').filter((line) => /error TS\d+/.test(line));
  assert.deepEqual(problems.filter((line) => !line.startsWith('wrong.ts(')), [], 'the consumer and the package compile clean');
  for (const problem of [/^wrong\.ts\(4,.*'string' is not assignable to type 'number'/, /^wrong\.ts\(6,.*'number' is not assignable to type 'string'/, /^wrong\.ts\(6,.*"SOMETHING"/]) {
    assert.ok(problems.some((line) => problem.test(line)), `tsc reports ${problem}; it said:\n${compiled}`);
  }

  const { stdout } = await run(process.execPath, ['out/consumer.js'], { cwd: consumer, timeout: 60_000 });
  const result = JSON.parse(stdout) as { id: string; title: string; price: number; users: number; missing: number; configError: string };
  assert.match(result.id, /^lst_/);
  assert.deepEqual({ ...result, id: 'lst_' }, { id: 'lst_', title: 'From the package', price: 1.5, users: 3, missing: 404, configError: 'ConfigError' });

  // The installed command, and a bare copy of dist/ (its own package.json says "type": "module").
  const installed = await run(join(consumer, 'node_modules/.bin/marketplace'), ['--version'], { cwd: consumer });
  assert.equal(installed.stdout, `${manifest.version}\n`);
  const bareCopy = join(work, 'bare-dist');
  cpSync(join(consumer, 'node_modules/marketplace-api/dist'), bareCopy, { recursive: true });
  const bare = await run(process.execPath, [join(bareCopy, 'main.js'), '--version'], { cwd: work });
  assert.equal(bare.stdout, `${manifest.version}\n`);
});
