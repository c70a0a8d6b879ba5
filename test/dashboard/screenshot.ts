// Makes docs/dashboard.png, the README's picture of the dashboard: the real app in this process
// with the demo data, a day of real API traffic laid down hour by hour on a manual clock (so the
// usage chart has a shape), then a 1280×800 shot of one user's keys and a key's usage chart.
// Run: node --import tsx test/dashboard/screenshot.ts [output.png]   (not part of npm test)

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../src/clock.ts';
import { DEMO_OPERATOR_TOKEN, demoApp } from '../helpers/demo-app.ts';
import { findChromium, launchChromium, watchPages } from './browser.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT = process.argv[2] ?? join(REPO, 'docs', 'dashboard.png');
const OPERATOR_TOKEN = DEMO_OPERATOR_TOKEN;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
// Requests in each of the last 24 hours, oldest first: quiet nights, a busy afternoon, and two
// bursts past the key's 100/min that come back as 429s.
const HOURLY_TRAFFIC = [12, 8, 5, 4, 6, 10, 22, 41, 63, 80, 74, 88, 95, 140, 92, 86, 79, 71, 60, 48, 150, 33, 21, 14];
const BURST_HOURS = new Set([13, 20]);

const search = findChromium();
if (!search.found) {
  process.stderr.write(`screenshot: ${search.reason}\n`);
  process.exit(1);
}

const realNow = Date.now();
const firstHour = Math.floor(realNow / HOUR_MS) * HOUR_MS - (HOURLY_TRAFFIC.length - 1) * HOUR_MS;
const clock = new ManualClock(firstHour - 2 * HOUR_MS);
const app = await demoApp(clock);
const base = app.base;

try {

  const admin = async <Body>(method: string, path: string, body?: unknown): Promise<Body> => {
    const response = await fetch(`${base}/admin/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${OPERATOR_TOKEN}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
    return (await response.json()) as Body;
  };
  const call = async (key: string, path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(`${base}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } });
    await response.arrayBuffer();
    return response;
  };

  const studio = await admin<{ data: { id: string } }>('POST', '/users', { name: 'Northwind Studio', email: 'dev@northwind.example', role: 'creator' });
  const owner = studio.data;
  const newKey = (name: string, permissions: string[], rateLimit: number) =>
    admin<{ data: { id: string; key: string } }>('POST', '/keys', { user_id: owner.id, name, permissions, rate_limit: rateLimit });
  // A few seconds apart, so the table's order (oldest first) is the order made here.
  const storefront = await newKey('Storefront', ['read:listings', 'GET /v1/users/:id'], 100);
  clock.advance(5_000);
  const catalogSync = await newKey('Catalog sync', ['read:listings', 'write:listings'], 1000);
  clock.advance(5_000);
  const oldLaptop = await newKey('Old laptop', ['read:listings'], 100);
  await admin('DELETE', `/keys/${oldLaptop.data.id}`);

  const firstPage = await fetch(`${base}/v1/listings?limit=5`, { headers: { Authorization: `Bearer ${storefront.data.key}` } });
  assert.equal(firstPage.status, 200);
  const listingIds = ((await firstPage.json()) as { data: Array<{ id: string }> }).data.map((listing) => listing.id);

  // A day of traffic: each hour's requests spread over its minutes (bursts packed into one).
  for (const [index, requests] of HOURLY_TRAFFIC.entries()) {
    clock.advance(firstHour + index * HOUR_MS + 5 * MINUTE_MS - clock.now());
    const perMinute = BURST_HOURS.has(index) ? requests : 40;
    for (let sent = 0; sent < requests; sent += 1) {
      if (sent > 0 && sent % perMinute === 0) clock.advance(MINUTE_MS);
      const path = sent % 5 === 4 ? `/v1/users/${owner.id}` : sent % 3 === 2 ? `/v1/listings/${listingIds[sent % listingIds.length]}` : '/v1/listings';
      await call(storefront.data.key, path);
    }
    if (index % 3 === 0) await call(catalogSync.data.key, '/v1/listings?limit=50');
  }
  clock.advance(realNow - clock.now());

  const browser = await launchChromium(search.path);
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const watch = await watchPages(context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/dashboard`);
    await page.locator('#token').fill(OPERATOR_TOKEN);
    await page.locator('#sign-in-button').click();
    await page.getByRole('button', { name: 'Northwind Studio', exact: true }).click();
    await page.getByRole('button', { name: 'Usage of Storefront' }).click();
    await page.locator('section.usage[aria-busy="false"] svg.usage-chart .bar').first().waitFor();
    // The keys table's heading at the top of the window, the usage chart below it.
    await page.evaluate("window.scrollTo(0, document.getElementById('keys-title').getBoundingClientRect().top + window.scrollY - 10)");
    const chartBottom = await page.evaluate<number>("document.querySelector('svg.usage-chart').getBoundingClientRect().bottom");
    assert.ok(chartBottom <= 800, `the chart fits in the window (its bottom is at ${chartBottom})`);
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await page.screenshot({ path: OUTPUT, type: 'png' });
    assert.deepEqual(watch.problems(), []);
    process.stdout.write(`screenshot: wrote ${OUTPUT}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await app.close();
}
