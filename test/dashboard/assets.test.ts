// The dashboard's static files: served under /dashboard with the right content types and
// security headers, and nothing else — no traversal, no dot files, no unknown names.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { keyRules, type KeyRules } from '../../src/auth/key-rules.ts';
import { pageServer } from '../../src/http/static-pages.ts';

/** Both pages, as a server with the dashboard and portal modules serves them. */
const serveDashboardAsset = pageServer({ dashboardIndex: true, portalPage: true });

const PUBLIC_DIR = new URL('../../src/dashboard/public/', import.meta.url);
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

test('GET /dashboard and /dashboard/ → index.html as text/html', async (t) => {
  const index = readFileSync(new URL('index.html', PUBLIC_DIR));
  for (const path of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
    await t.test(path, async () => {
      const asset = serveDashboardAsset(path);
      assert.ok(asset, path);
      assert.equal(asset.status, 200);
      assert.equal(asset.headers['Content-Type'], 'text/html; charset=utf-8');
      assert.deepEqual(asset.body, index);
    });
  }
});

test('each kind of file gets its content type', async (t) => {
  const cases: Array<[string, string]> = [
    ['/dashboard/app.js', 'text/javascript; charset=utf-8'],
    ['/dashboard/chart.js', 'text/javascript; charset=utf-8'],
    ['/dashboard/style.css', 'text/css; charset=utf-8'],
    ['/dashboard/favicon.svg', 'image/svg+xml'],
  ];
  for (const [path, type] of cases) {
    await t.test(path, async () => {
      const asset = serveDashboardAsset(path);
      assert.ok(asset, path);
      assert.equal(asset.headers['Content-Type'], type, path);
      assert.ok(asset.body.length > 0, path);
    });
  }
});

test('every answer carries the security headers', async (t) => {
  for (const path of ['/dashboard', '/dashboard/app.js', '/dashboard/style.css', '/dashboard/favicon.svg']) {
    await t.test(path, async () => {
      const headers = serveDashboardAsset(path)?.headers;
      assert.ok(headers, path);
      assert.equal(headers['Content-Security-Policy'], EXPECTED_CSP);
      assert.equal(headers['X-Content-Type-Options'], 'nosniff');
      assert.equal(headers['X-Frame-Options'], 'DENY');
      assert.equal(headers['Referrer-Policy'], 'no-referrer');
      assert.equal(headers['Cache-Control'], 'no-cache');
    });
  }
});

test('a caller changing the returned headers does not change the next answer', () => {
  const first = serveDashboardAsset('/dashboard/app.js');
  assert.ok(first);
  first.headers['Content-Security-Policy'] = 'changed';
  assert.equal(serveDashboardAsset('/dashboard/app.js')?.headers['Content-Security-Policy'], EXPECTED_CSP);
});

test('traversal, encoded separators, dot files and nested paths → null (404)', () => {
  const refused = [
    '/dashboard/../package.json',
    '/dashboard/..',
    '/dashboard/..%2Fpackage.json',
    '/dashboard/%2e%2e/package.json',
    '/dashboard/%2E%2E%2Fpackage.json',
    '/dashboard/app.js%00',
    '/dashboard/..\\package.json',
    '/dashboard/.hidden',
    '/dashboard/.env',
    '/dashboard/sub/app.js',
    '/dashboard//app.js',
    '/dashboard/./app.js',
    '/dashboard/app..js',
    '/dashboard/%61pp.js',
  ];
  for (const path of refused) assert.equal(serveDashboardAsset(path), null, path);
});

test('unknown files and paths outside /dashboard → null', async (t) => {
  for (const path of ['/dashboard/nope.js', '/dashboard/index.htm', '/dashboardx', '/dashboard.html', '/', '/v1/listings', '/app.js']) {
    await t.test(path, async () => {
      assert.equal(serveDashboardAsset(path), null, path);
    });
  }
});

test('the page loads only same-origin files, with no inline script, style or handlers', () => {
  const html = readFileSync(new URL('index.html', PUBLIC_DIR), 'utf8');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length > 0);
  for (const [, attributes, body] of scripts) {
    assert.match(attributes ?? '', /\bsrc="\/dashboard\/[\w.-]+\.js"/, 'every script is a file of ours');
    assert.equal((body ?? '').trim(), '', 'no inline script');
  }
  assert.doesNotMatch(html, /<style\b/i);
  assert.doesNotMatch(html, /\sstyle=/i);
  assert.doesNotMatch(html, /\son[a-z]+=/i);
  assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//i, 'no external fonts, scripts or styles');
  // Every file the page names is one the handler serves.
  for (const [, path] of html.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)) {
    assert.ok(serveDashboardAsset(path ?? ''), `${path} is served`);
  }
});

test('the scripts never turn data into markup, and every module they import exists', () => {
  const names = readdirSync(PUBLIC_DIR).filter((name) => name.endsWith('.js'));
  assert.ok(names.includes('app.js'));
  for (const name of names) {
    const source = readFileSync(new URL(name, PUBLIC_DIR), 'utf8');
    for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'createContextualFragment']) {
      assert.ok(!source.includes(sink), `${name} uses ${sink}`);
    }
    for (const [, imported] of source.matchAll(/from '\.\/([\w-]+\.js)'/g)) {
      assert.ok(serveDashboardAsset(`/dashboard/${imported}`), `${name} imports ${imported}, which is served`);
    }
  }
});

test('GET /dashboard/key-rules.js → the server\'s own key rules, as a module the page imports', async () => {
  const asset = serveDashboardAsset('/dashboard/key-rules.js');
  assert.ok(asset);
  assert.equal(asset.headers['Content-Type'], 'text/javascript; charset=utf-8');
  assert.equal(asset.headers['X-Content-Type-Options'], 'nosniff');
  const module = (await import(`data:text/javascript;base64,${asset.body.toString('base64')}`)) as { KEY_RULES: KeyRules };
  assert.deepEqual(module.KEY_RULES, JSON.parse(JSON.stringify(keyRules())));
  assert.ok(module.KEY_RULES.methods.includes('PATCH'), 'every method the server accepts in an entry');
  assert.equal(new RegExp(module.KEY_RULES.route_entry).test('GET /v1/listings/*'), true);
  assert.equal(existsSync(new URL('key-rules.js', PUBLIC_DIR)), false, 'made by the server, never a file to keep in step');
});

test('GET /portal and /portal/ → the developer portal page, with the same security headers, loading only this server\'s files', () => {
  const page = readFileSync(new URL('portal.html', PUBLIC_DIR), 'utf8');
  for (const path of ['/portal', '/portal/']) {
    const asset = serveDashboardAsset(path);
    assert.ok(asset, path);
    assert.equal(asset.headers['Content-Type'], 'text/html; charset=utf-8');
    assert.equal(asset.headers['Content-Security-Policy'], EXPECTED_CSP);
    assert.equal(asset.body.toString('utf8'), page);
  }
  const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
  assert.ok(sources.length > 0);
  for (const source of sources) {
    assert.match(source, /^(\/dashboard\/|#)/, `${source} is not one of this server's files`);
    if (source.startsWith('/dashboard/')) assert.ok(serveDashboardAsset(source), `${source} is served`);
  }
  assert.equal(serveDashboardAsset('/portal/app.js'), null, 'only the page itself lives at /portal');
});
