// Serves the operator dashboard's static files (src/dashboard/public) under /dashboard, and the
// developer portal's page (portal.html, whose scripts live beside the dashboard's and share its
// modules) at /portal, for the dashboard and portal modules, with a strict
// Content-Security-Policy. Files are read into memory once, at first use; only names found in
// that folder are ever served, so no request can reach a file outside it. The single
// executable has no folder: it hands the same files over from inside itself (useDashboardFiles).

import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyRules } from '../auth/key-rules.ts';

export interface StaticAsset {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

const MOUNT = '/dashboard';
const PORTAL_PAGE = '/portal';
// One plain file name: letters, digits, '-', '_' and inner dots; never a leading dot, a slash,
// a backslash or a percent sign, so dot files, traversal and encoded separators all fail here.
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

let assets: Map<string, StaticAsset> | null = null;
let embeddedFiles: ReadonlyMap<string, Uint8Array> | null = null;

/** Serves these files (name → bytes) instead of the public folder; the single executable's entry calls it. */
export function useDashboardFiles(files: ReadonlyMap<string, Uint8Array>): void {
  embeddedFiles = files;
  assets = null;
}

/** The public folder's files by name; empty when there is no folder (e.g. a build without it). */
export function readPublicFolder(): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  try {
    // Relative to this module, so the same code works from src/ (tsx) and from dist/ (built),
    // as long as the public folder is copied next to it.
    const publicDir = new URL('../dashboard/public/', import.meta.url);
    for (const name of readdirSync(fileURLToPath(publicDir))) {
      if (contentTypeOf(name) !== null) files.set(name, readFileSync(new URL(name, publicDir)));
    }
  } catch {
    // No public folder: the dashboard is simply not there.
  }
  return files;
}

/** The single executable's asset that holds the dashboard's files. */
export const DASHBOARD_ASSET = 'dashboard.json';

/** The files as one JSON text (name → base64), the asset's form. */
export function encodeDashboardFiles(files: ReadonlyMap<string, Uint8Array>): string {
  return JSON.stringify(Object.fromEntries([...files].map(([name, bytes]) => [name, Buffer.from(bytes).toString('base64')])));
}

/** The asset's JSON text back to files. */
export function decodeDashboardFiles(json: string): Map<string, Uint8Array> {
  const encoded = JSON.parse(json) as Record<string, string>;
  return new Map(Object.entries(encoded).map(([name, base64]) => [name, Buffer.from(base64, 'base64')]));
}

/** The Content-Type of a file the dashboard may serve, or null for any other name. */
function contentTypeOf(name: string): string | null {
  if (!SAFE_NAME.test(name) || name.includes('..')) return null;
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? null;
}

function loadAssets(): Map<string, StaticAsset> {
  const loaded = new Map<string, StaticAsset>();
  for (const [name, bytes] of embeddedFiles ?? readPublicFolder()) {
    const contentType = contentTypeOf(name);
    if (contentType === null) continue;
    loaded.set(name, { status: 200, headers: { 'Content-Type': contentType, ...SECURITY_HEADERS }, body: Buffer.from(bytes) });
  }
  if (loaded.size > 0) {
    loaded.set(KEY_RULES_MODULE, { status: 200, headers: { 'Content-Type': CONTENT_TYPES['.js']!, ...SECURITY_HEADERS }, body: Buffer.from(keyRulesModule()) });
  }
  return loaded;
}

/** Made by the server, not a file: the dashboard checks keys by the server's own rules. */
const KEY_RULES_MODULE = 'key-rules.js';

/** The text of /dashboard/key-rules.js: the rules of src/auth/key-rules.ts as an ES module. */
export function keyRulesModule(): string {
  return `// The server's rules for API keys (src/auth/key-rules.ts), made by the server when it serves the dashboard.\nexport const KEY_RULES = Object.freeze(${JSON.stringify(keyRules())});\n`;
}

export interface PageChoice {
  /** /dashboard itself: the operator dashboard's page (the dashboard module). */
  dashboardIndex: boolean;
  /** /portal itself: the developer portal's page (the portal module). */
  portalPage: boolean;
}

/**
 * What serves the chosen pages: the dashboard file for a request path, or null (answer 404) for
 * anything else. The scripts and styles under /dashboard/ are served with either page, since
 * the portal's page loads them from there too.
 * @example pageServer({ dashboardIndex: true, portalPage: false })('/dashboard')        // index.html
 * @example pageServer({ dashboardIndex: true, portalPage: false })('/dashboard/app.js') // the script, text/javascript
 * @example pageServer({ dashboardIndex: false, portalPage: true })('/portal')           // portal.html, the developer portal
 * @example pageServer({ dashboardIndex: true, portalPage: true })('/dashboard/../x')    // null
 */
export function pageServer(choice: PageChoice): (pathname: string) => StaticAsset | null {
  return (pathname) => {
    let name: string;
    if (pathname === MOUNT || pathname === `${MOUNT}/`) {
      if (!choice.dashboardIndex) return null;
      name = 'index.html';
    } else if (pathname === PORTAL_PAGE || pathname === `${PORTAL_PAGE}/`) {
      if (!choice.portalPage) return null;
      name = 'portal.html';
    } else if (pathname.startsWith(`${MOUNT}/`)) {
      name = pathname.slice(MOUNT.length + 1);
      if (name === 'index.html' && !choice.dashboardIndex) return null;
    } else return null;
    if (!SAFE_NAME.test(name) || name.includes('..')) return null;
    assets ??= loadAssets();
    const asset = assets.get(name);
    // A copy of the headers, so a caller adding its own cannot change the next answer.
    return asset ? { status: asset.status, headers: { ...asset.headers }, body: asset.body } : null;
  };
}
