// `npm run build` (and `npm pack`'s prepack): compiles src/ into dist/ as JavaScript with .d.ts
// types, copies the dashboard's files, and makes dist/ stand on its own: a package.json saying
// "type": "module" (so a copy of dist/ runs on every Node 20, not only those that guess the
// module kind) and holding the version, and .d.ts imports ending in .js as consumers resolve them.

import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = join(root, 'dist');
// The single executable and its intermediate files (npm run build:binary) survive a rebuild.
const KEEP = new Set(['marketplace', 'sea']);

for (const entry of safeReaddir(dist)) if (!KEEP.has(entry)) rmSync(join(dist, entry), { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'src/tsconfig.build.json')], { stdio: 'inherit' });

cpSync(join(root, 'src/dashboard/public'), join(dist, 'dashboard/public'), { recursive: true });

// tsc keeps the sources' `.ts` import paths in declarations (it rewrites them only in JavaScript);
// a consumer's NodeNext resolution wants the `.js` the JavaScript has.
const RELATIVE_TS_IMPORT = /(from\s+|import\()(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g;
for (const file of filesUnder(dist).filter((name) => name.endsWith('.d.ts'))) {
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_TS_IMPORT, '$1$2$3.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
writeFileSync(join(dist, 'package.json'), `${JSON.stringify({ name: manifest.name, version: manifest.version, type: 'module' }, null, 2)}\n`);

for (const entry of ['cli.js', 'main.js']) chmodSync(join(dist, entry), 0o755);

function safeReaddir(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).map((name) => join(directory, name));
}
