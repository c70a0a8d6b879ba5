// The product's version, the one in package.json, for --version, /healthz and the operator stats.
// Read once at start-up from the package.json beside the running code (dist/package.json, which
// the build writes) or one folder up (the package root, when src/ runs through tsx). The single
// executable has no files around it: its bundler inlines the version in place of the read.

import { readFileSync } from 'node:fs';

// Replaced by a string literal when src/build/build-binary.ts bundles the executable; absent otherwise.
declare const MARKETPLACE_BUNDLED_VERSION: string | undefined;

export const VERSION: string = typeof MARKETPLACE_BUNDLED_VERSION === 'string' ? MARKETPLACE_BUNDLED_VERSION : readPackageVersion();

function readPackageVersion(): string {
  for (const candidate of ['./package.json', '../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version?: unknown };
      if (typeof manifest.version === 'string') return manifest.version;
    } catch {
      // Not there (src/ has no package.json of its own): try the next place.
    }
  }
  return '0.0.0-unknown';
}
