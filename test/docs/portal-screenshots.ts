// Makes the pictures in docs/portal.md (docs/images/portal-*.png): the real app in this process
// with the demo listings, one user's keys (a plan request pending, one declined with the
// operator's note), a few hours of real API traffic laid down on a manual clock, two webhooks
// answering 204 and 503 from receivers on 127.0.0.1, then the portal in Chromium, signed in
// through its own form: keys and webhook deliveries at 1280 px; the Security page's sessions and
// activity, the two-factor setup with its QR code, and a key's usage at 390 px. Run: node --import tsx test/docs/portal-screenshots.ts [output-directory]
// (not part of npm test; it fails on a script error or a Content-Security-Policy violation).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { findChromium, launchChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { DEMO_OPERATOR_TOKEN, demoApp } from '../helpers/demo-app.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT = process.argv[2] ?? join(REPO, 'docs', 'images');
const HOUR_MS = 3_600_000;
// Requests in each of the last hours, oldest first, on the key whose usage is shown.
const HOURLY_TRAFFIC = [14, 30, 55, 42, 70, 38, 25, 60, 18];

const search = findChromium();
if (!search.found) {
  process.stderr.write(`portal-screenshots: ${search.reason}\n`);
  process.exit(1);
}

/** A webhook receiver on 127.0.0.1 that answers every delivery with `status`. */
async function receiver(status: number): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { url: `http://127.0.0.1:${address.port}/hooks/marketplace`, server };
}

const realNow = Date.now();
const firstHour = Math.floor(realNow / HOUR_MS) * HOUR_MS - (HOURLY_TRAFFIC.length - 1) * HOUR_MS;
const clock = new ManualClock(firstHour - HOUR_MS);
const app = await demoApp(clock, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' });
const base = app.base;
const receivers = [await receiver(204), await receiver(503)];

try {
  const send = async <Body>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ body: Body; cookie: string | null }> => {
    const response = await fetch(`${base}${path}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
    const cookie = response.headers.get('set-cookie')?.split(';', 1)[0] ?? null;
    return { body: (await response.json()) as Body, cookie };
  };
  const operator = { Authorization: `Bearer ${DEMO_OPERATOR_TOKEN}` };

  // A creator with a password, set the way users set theirs: through an invitation.
  const person = { email: 'dev@northwind.example', password: 'northwind studio passphrase' };
  const user = (await send<{ data: { id: string } }>('POST', '/admin/v1/users', operator, { name: 'Northwind Studio', email: person.email, role: 'creator' })).body.data;
  const invitation = (await send<{ data: { token: string } }>('POST', `/admin/v1/users/${user.id}/invitations`, operator)).body.data;
  const session = await send('POST', '/portal/v1/password', { Origin: base }, { invitation: invitation.token, password: person.password });
  const portal = { Cookie: session.cookie!, Origin: base };

  const newKey = async (name: string, permissions: string[]) => (await send<{ data: { id: string; key: string } }>('POST', '/portal/v1/keys', portal, { name, permissions })).body.data;
  const storefront = await newKey('Storefront', ['read:listings', 'GET /v1/users/me']);
  const catalogSync = await newKey('Catalog sync', ['read:listings', 'write:listings']);
  await send('POST', '/portal/v1/plan-requests', portal, { key_id: storefront.id, plan: 'business' });
  const declined = (await send<{ data: { id: string } }>('POST', '/portal/v1/plan-requests', portal, { key_id: catalogSync.id, plan: 'business' })).body.data;
  await send('POST', `/admin/v1/plan-requests/${declined.id}/decline`, operator, { note: 'Write to sales@ first: Business is for contracts.' });

  const listings = (await send<{ data: Array<{ id: string }> }>('GET', '/v1/listings?limit=5', { Authorization: `Bearer ${storefront.key}` })).body.data;
  // A few hours of traffic on the storefront key, each hour's requests spread over its minutes.
  for (const [index, requests] of HOURLY_TRAFFIC.entries()) {
    clock.advance(firstHour + index * HOUR_MS + 5 * 60_000 - clock.now());
    for (let sent = 0; sent < requests; sent += 1) {
      if (sent > 0 && sent % 40 === 0) clock.advance(60_000);
      const path = sent % 5 === 4 ? '/v1/users/me' : sent % 3 === 2 ? `/v1/listings/${listings[sent % listings.length]!.id}` : sent % 7 === 6 ? '/v1/listings/lst_gone' : '/v1/listings';
      await (await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${storefront.key}` } })).arrayBuffer();
    }
  }
  clock.advance(realNow - clock.now());

  // Two webhooks: one whose receiver answers 204, one whose receiver answers 503 (retrying).
  for (const { url } of receivers) await send('POST', '/portal/v1/webhooks', portal, { url, events: ['listing.created', 'ping'] });

  const browser = await launchChromium(search.path);
  try {
    const shoot = async (width: number, height: number, name: string, show: (page: Page) => Promise<void>) => {
      const context = await browser.newContext({ viewport: { width, height } });
      // Before signing in, the page's GET /portal/v1/me is answered 401: expected.
      const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${base}/portal`);
      await signInThroughForm(page, person);
      await show(page);
      await page.evaluate('document.activeElement && document.activeElement.blur()');
      const path = join(OUTPUT, `portal-${name}.png`);
      await page.screenshot({ path, type: 'png' });
      assert.deepEqual(watch.problems(), []);
      await context.close();
      process.stdout.write(`portal-screenshots: wrote ${path}\n`);
    };

    await shoot(1280, 720, 'keys', async (page) => {
      await page.locator(`[data-key-id="${catalogSync.id}"] .plan-request`).waitFor();
      await page.evaluate("window.scrollTo(0, document.querySelector('.key-cards').getBoundingClientRect().top + window.scrollY - 12)");
    });
    await shoot(1280, 720, 'webhooks', async (page) => {
      await page.locator('.tab[data-page=webhooks]').click();
      for (const card of await page.locator('[data-webhook-id]').all()) {
        await card.locator('.last-delivery[data-state]').waitFor();
        await card.locator('button', { hasText: 'Deliveries' }).click();
        await card.locator('.deliveries li').first().waitFor();
      }
      await page.evaluate("window.scrollTo(0, document.querySelector('.webhook-cards').getBoundingClientRect().top + window.scrollY - 12)");
    });
    await shoot(390, 844, 'security', async (page) => {
      await page.locator('.tab[data-page=security]').click();
      await page.locator('.session-card').first().waitFor();
    });
    await shoot(390, 844, 'activity', async (page) => {
      await page.locator('.tab[data-page=security]').click();
      await page.locator('.activity li').first().waitFor();
      await page.evaluate("window.scrollTo(0, document.querySelector('#activity-title').getBoundingClientRect().top + window.scrollY - 12)");
    });
    await shoot(390, 844, 'two-factor', async (page) => {
      await page.locator('.tab[data-page=profile]').click();
      await page.locator('#two-factor-enrol-form input[type=password]').fill(person.password);
      await page.locator('#two-factor-enrol-button').click();
      await page.locator('#two-factor-qr').waitFor();
      await page.evaluate("window.scrollTo(0, document.querySelector('#two-factor-panel').getBoundingClientRect().top + window.scrollY - 8)");
    });
    await shoot(390, 1100, 'usage', async (page) => {
      await page.locator(`[data-key-id="${storefront.id}"] button`, { hasText: /^Usage$/ }).click();
      await page.locator('section.usage[aria-busy="false"] svg.usage-chart .bar').first().waitFor();
      await page.evaluate("window.scrollTo(0, document.querySelector('section.usage').getBoundingClientRect().top + window.scrollY - 8)");
    });
  } finally {
    await browser.close();
  }
} finally {
  await app.close();
  for (const { server } of receivers) server.close();
}
