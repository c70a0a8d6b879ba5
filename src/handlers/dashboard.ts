// Serves the operator dashboard's static files (src/dashboard/public) under /dashboard, with a
// strict Content-Security-Policy. Files are read into memory once, at first use; only names
// found in that folder are ever served, so no request can reach a file outside it.

import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

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
// One plain file name: letters, digits, '-', '_' and inner dots; never a leading dot, a slash,
// a backslash or a percent sign, so dot files, traversal and encoded separators all fail here.
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

// Relative to this module, so the same code works from src/ (tsx) and from dist/ (built),
// as long as the public folder is copied next to it.
const PUBLIC_DIR = new URL('../dashboard/public/', import.meta.url);

let assets: Map<string, StaticAsset> | null = null;

function loadAssets(): Map<string, StaticAsset> {
  const loaded = new Map<string, StaticAsset>();
  let names: string[];
  try {
    names = readdirSync(fileURLToPath(PUBLIC_DIR));
  } catch {
    // No public folder (e.g. a build without it): the dashboard is simply not there.
    return loaded;
  }
  for (const name of names) {
    const contentType = CONTENT_TYPES[extname(name).toLowerCase()];
    if (!contentType || !SAFE_NAME.test(name) || name.includes('..')) continue;
    const body = readFileSync(new URL(name, PUBLIC_DIR));
    loaded.set(name, { status: 200, headers: { 'Content-Type': contentType, ...SECURITY_HEADERS }, body });
  }
  return loaded;
}

/**
 * The dashboard file for a request path, or null (answer 404) for anything else.
 * @example serveDashboardAsset('/dashboard')        // index.html
 * @example serveDashboardAsset('/dashboard/app.js') // the script, text/javascript
 * @example serveDashboardAsset('/dashboard/../x')   // null
 */
export function serveDashboardAsset(pathname: string): StaticAsset | null {
  let name: string;
  if (pathname === MOUNT || pathname === `${MOUNT}/`) name = 'index.html';
  else if (pathname.startsWith(`${MOUNT}/`)) name = pathname.slice(MOUNT.length + 1);
  else return null;
  if (!SAFE_NAME.test(name) || name.includes('..')) return null;
  assets ??= loadAssets();
  const asset = assets.get(name);
  // A copy of the headers, so a caller adding its own cannot change the next answer.
  return asset ? { status: asset.status, headers: { ...asset.headers }, body: asset.body } : null;
}
