// The quick run's files compiled ahead, with esbuild: each test file an entry, what they share
// split into common chunks. Each of the quick run's processes then loads a few dozen JavaScript
// files instead of having tsx resolve and transform some three hundred TypeScript modules, work
// that took about a quarter of the run's CPU time.
//
// Each module's own import.meta.url, dirname and filename are written into it as text, so code
// that finds files beside itself (the dashboard's assets, a test's fixtures) still finds them.
// Packages stay outside (node_modules is found from the output directory, which sits inside it).

import { build, type Plugin } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `import.meta.url` and friends in code, not inside a string (build tools name them as text). */
const IMPORT_META = /(?<!['"`])\bimport\.meta\.(url|dirname|filename)\b/g;

const ownLocation: Plugin = {
  name: 'own-location',
  setup(bundler) {
    bundler.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const values = { url: pathToFileURL(path).href, dirname: dirname(path), filename: path };
      const contents = source.replace(IMPORT_META, (_match, name: keyof typeof values) => JSON.stringify(values[name]));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Compiles `files` (relative to `root`) into `outDir`, replacing what was there; answers the
 * compiled path of each, as `outDir/<file with .js>`.
 */
export async function compileUnitFiles(root: string, files: string[], outDir: string): Promise<Map<string, string>> {
  await rm(outDir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: files,
    outdir: outDir,
    outbase: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'error',
    plugins: [ownLocation],
  });
  return new Map(files.map((file) => [file, join(outDir, file.replace(/\.ts$/, '.js'))]));
}
