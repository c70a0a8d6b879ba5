// `npm run build:binary`: one executable file, dist/marketplace, that runs with no Node.js
// installed (Node's single executable applications). Steps: bundle src/executable.ts and all it
// imports into one CommonJS file (esbuild; the version inlined), pack the dashboard's files as an
// asset, let this very `node` turn both into a blob, copy the `node` binary and inject the blob
// into the copy (postject). The result runs on machines like this one (same OS and CPU kind).

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { DASHBOARD_ASSET, encodeDashboardFiles, readPublicFolder } from '../http/static-pages.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = join(root, 'dist/sea');
const executable = join(root, 'dist/marketplace');
const startedAt = performance.now();
const step = (what: string) => process.stdout.write(`build:binary: ${what} (${((performance.now() - startedAt) / 1000).toFixed(1)} s)\n`);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const bundle = join(work, 'marketplace.cjs');
await build({
  entryPoints: [join(root, 'src/executable.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  // pg's optional native binding: never installed here, and pg itself falls back to JavaScript.
  external: ['pg-native'],
  define: {
    MARKETPLACE_BUNDLED_VERSION: JSON.stringify(version),
    // A CommonJS bundle has no import.meta: the code that reads files beside itself finds nothing
    // there and takes the bundled values instead (version.ts, the dashboard asset).
    'import.meta.url': 'undefined',
  },
});
step(`bundled ${(statSync(bundle).size / 1024).toFixed(0)} KiB of JavaScript`);

const dashboard = join(work, DASHBOARD_ASSET);
const files = readPublicFolder();
if (!files.has('index.html')) throw new Error('the dashboard files (src/dashboard/public) are missing');
writeFileSync(dashboard, encodeDashboardFiles(files));

const blob = join(work, 'sea-prep.blob');
const seaConfig = join(work, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, assets: { [DASHBOARD_ASSET]: dashboard } }, null, 2),
);
execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'inherit' });
step('made the blob');

const partial = `${executable}.partial`;
copyFileSync(process.execPath, partial);
chmodSync(partial, 0o755);
const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
execFileSync(process.execPath, [postject, partial, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], { stdio: 'inherit' });
renameSync(partial, executable);
step(`wrote ${executable}, ${(statSync(executable).size / 1024 / 1024).toFixed(1)} MiB`);
