// CORS in a real browser: headless Chromium loads a page from one origin (a tiny server on its
// own port) and fetches /v1 from the API on another port with an API key. On the origin named
// in CORS_ORIGINS the fetch succeeds (after Chromium's own preflight) and the page reads the
// exposed headers; on a third origin, not named, Chromium refuses the answer to the page.
// Skipped, with the reason, only when no Chromium can be found (see test/dashboard/browser.ts).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { findChromium } from '../dashboard/browser.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const STEP_TIMEOUT_MS = 15_000;

/** A server on 127.0.0.1 (its own port, so its own origin) answering every path with an empty page. */
async function pageOrigin(t: TestContext): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>client</title><p>client page</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What the page's fetch saw: the status and the headers script may read, or the error it got. */
interface FetchOutcome {
  ok: boolean;
  status?: number;
  headers?: Record<string, string | null>;
  total?: number;
  error?: string;
}

// A string, not a function: this file is type-checked without the DOM's types.
const FETCH_FROM_PAGE = `async ({ url, key }) => {
  try {
    const response = await fetch(url, { headers: { Authorization: 'Bearer ' + key, 'Idempotency-Key': 'unused-on-get' } });
    const names = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'etag', 'content-type'];
    const headers = Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));
    const body = await response.json();
    return { ok: true, status: response.status, headers, total: body.pagination.total };
  } catch (error) {
    return { ok: false, error: String(error) };
  }
}`;

test('a page on an allowed origin fetches /v1 with a key and reads the exposed headers; a page on another origin cannot', { skip: search.found ? false : search.reason, timeout: 120_000 }, async (t) => {
  if (!search.found) return;
  const allowed = await pageOrigin(t);
  const other = await pageOrigin(t);
  const api = await startServer(t, { dataDir: null, env: { CORS_ORIGINS: allowed } });
  const { key } = await api.userWithKey('creator', ['read:listings', 'write:listings']);
  await api.request('POST', '/v1/listings', { key, body: { title: 'Seen from a browser', type: 'TOOL', price: 1 } });

  const browser = await launch(search.path);
  t.after(() => browser.close());
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);

  await page.goto(`${allowed}/`);
  const fromAllowed = (await page.evaluate(`(${FETCH_FROM_PAGE})(${JSON.stringify({ url: `${api.url}/v1/listings`, key })})`)) as FetchOutcome;
  assert.equal(fromAllowed.ok, true, `the fetch from ${allowed} succeeds: ${fromAllowed.error ?? ''}`);
  assert.equal(fromAllowed.status, 200);
  assert.equal(fromAllowed.total, 1);
  const headers = fromAllowed.headers!;
  assert.match(headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, 'X-Request-Id is readable');
  assert.equal(headers['x-ratelimit-limit'], '1000', 'X-RateLimit-Limit is readable');
  assert.match(headers['x-ratelimit-remaining'] ?? '', /^\d+$/, 'X-RateLimit-Remaining is readable');
  assert.match(headers['x-ratelimit-reset'] ?? '', /^\d+$/, 'X-RateLimit-Reset is readable');
  assert.match(headers.etag ?? '', /^"/, 'ETag is readable');

  await page.goto(`${other}/`);
  const fromOther = (await page.evaluate(`(${FETCH_FROM_PAGE})(${JSON.stringify({ url: `${api.url}/v1/listings`, key })})`)) as FetchOutcome;
  assert.equal(fromOther.ok, false, `the fetch from ${other} must fail, got status ${fromOther.status}`);
  assert.match(fromOther.error ?? '', /TypeError|Failed to fetch/);
});
