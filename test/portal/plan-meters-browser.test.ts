// What a plan meters for the account, as the portal shows it (contract section 23), in headless
// Chromium against a real server at 390 and 1280 px: after real requests with real keys, "Your
// plans" shows the window the user's keys on Free share, the quota used, what is left and its
// reset, and each key's share — the same figures the API's X-Quota-* headers give; a 429 past
// the quota counts in no share, a key revoked today keeps its share; an operator's top-up shows
// at once, with a word on why the shares no longer add up. A key's usage shows the quota too.
// Nothing scrolls sideways at 390 px, and axe finds nothing serious or critical. Skipped, with
// the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Locator } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { DEFAULT_PLANS } from '../../src/auth/plans.ts';
import { findChromium, sharedChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { loadAxe, seriousFindings, sidewaysScroll } from '../helpers/axe.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

/** The text of each `dt` with its `dd`, in a card's facts. */
async function factsOf(card: Locator): Promise<Record<string, string>> {
  const pairs = await card.locator('dl.key-facts').evaluate((list) => {
    const terms = [...(list as any).querySelectorAll('dt')];
    return terms.map((term: any) => [term.textContent.trim(), term.nextElementSibling.textContent.trim()]);
  });
  return Object.fromEntries(pairs);
}

async function sharesOf(card: Locator): Promise<Record<string, string>> {
  const rows = await card.locator('.quota-shares li').evaluateAll((items) => items.map((item: any) => [item.querySelector('.share-key').textContent.trim(), item.querySelector('.share-count').textContent.trim()]));
  return Object.fromEntries(rows);
}

test("the portal shows per plan the shared window, the quota used, left and its reset, and each key's share, after real requests", { skip, timeout: 240_000 }, async (t) => {
  // The server's clock stands still at the real time, so no UTC midnight can reset the day's count mid-test.
  const server = await startServer(t, { clock: new ManualClock(Date.now()) });
  const plans = DEFAULT_PLANS.map((plan) => (plan.id === 'free' ? { ...plan, quota: { requests: 6, period: 'day' } } : plan));
  assert.equal((await server.admin('PUT', '/admin/v1/plans', { plans })).status, 200);
  const user = await signedInUser(server);
  const makeKey = async (name: string) => (await server.request('POST', '/portal/v1/keys', { headers: user.headers, body: { name } })).body.data;
  const shop = await makeKey('shop');
  const reports = await makeKey('reports');
  assert.equal(shop.plan, 'free');
  const call = (key: { key: string }) => server.request('GET', '/v1/listings', { headers: { authorization: `Bearer ${key.key}` } });

  // A key used once today, then revoked: its request still counts, and it keeps its share.
  const old = await makeKey('old');
  await call(old);
  assert.equal((await server.request('DELETE', `/portal/v1/keys/${old.id}`, { headers: user.headers })).status, 200);

  // Real requests with the real keys: three on one, one on the other.
  await call(shop);
  await call(shop);
  await call(reports);
  const last = await call(shop);
  assert.equal(last.headers.get('x-quota-remaining'), '1');

  const browser = await browserFor(t);
  const findings: string[] = [];
  for (const width of [390, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    t.after(() => context.close());
    const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
    await loadAxe(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/portal`);
    await signInThroughForm(page, user);
    const meters = page.locator('section.plan-meters[aria-busy="false"]');
    const free = meters.locator('.plan-meter[data-plan-id="free"]');
    await free.waitFor();

    if (width === 390) {
      // Before the quota is used up: 5 of 6, one left, shares 3, 1 and the revoked key's 1.
      const facts = await factsOf(free);
      assert.match(facts['Per minute']!, /^100 requests, shared by your 2 keys on Free$/, `${width} px: ${JSON.stringify(facts)}`);
      assert.match(facts['Window now']!, /^9[0-9] of 100 left; resets /, `${width} px: the shared window`);
      assert.equal(facts.Quota, '6 a day: 5 of 6 used today (UTC)');
      assert.match(facts.Left!, /^1 left; resets /);
      assert.deepEqual(await sharesOf(free), { '"shop"': '3', '"reports"': '1', '"old" (no longer active)': '1' });
      assert.equal(await free.locator('.hint').count(), 0, 'the shares add up to the count: nothing to explain');
    } else {
      // Use the quota up, and one more: refused with 429, which counts in no share.
      assert.equal((await call(reports)).status, 200);
      const refused = await call(shop);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.quota.used, 6);
      await page.reload();
      await free.waitFor();
      const facts = await factsOf(free);
      assert.equal(facts.Quota, '6 a day: 6 of 6 used today (UTC)');
      assert.match(facts.Left!, /^0 left; resets /);
      assert.equal(await free.locator('.badge', { hasText: 'quota used up' }).count(), 1);
      assert.deepEqual(await sharesOf(free), { '"shop"': '3', '"reports"': '2', '"old" (no longer active)': '1' }, 'the refused request is in no share');

      // The operator tops up two requests: the page shows 4 used and says why the shares differ.
      assert.equal((await server.admin('POST', `/admin/v1/keys/${shop.id}/quota`, { add: 2 })).status, 200);
      await page.reload();
      await free.waitFor();
      assert.equal((await factsOf(free)).Quota, '6 a day: 4 of 6 used today (UTC)');
      assert.match(await free.locator('.hint').innerText(), /shares add up to 6: the operator set or topped up the count/);
      const api = await call(reports);
      assert.equal(api.headers.get('x-quota-remaining'), '1', 'the API agrees with the page (this request the 5th)');
      await page.reload();
      await free.waitFor();
      assert.equal((await factsOf(free)).Quota, '6 a day: 5 of 6 used today (UTC)');
    }
    findings.push(...(await seriousFindings(page, `${width} px keys with plans`)));

    // A key's usage shows the quota of its plan, and that its window is shared.
    const card = page.locator(`[data-key-id="${shop.id}"]`);
    await card.locator('button', { hasText: /^Usage$/ }).click();
    const usage = card.locator('section.usage[aria-busy="false"]');
    await usage.locator('.stat.quota').waitFor();
    assert.match(await usage.locator('.stat.quota').innerText(), /of 6 used today \(UTC\)/);
    assert.match(await usage.locator('.stat', { hasText: 'Window now' }).innerText(), /shared by the account's keys on this plan/);
    findings.push(...(await seriousFindings(page, `${width} px usage with a quota`)));

    const sideways = await sidewaysScroll(page);
    assert.ok(sideways <= 0, `${width} px: the page scrolls ${sideways} px sideways`);
    assert.deepEqual(watch.problems(), []);
  }
  assert.deepEqual(findings, []);
});

test('a plan without a quota says so, and a user whose keys are on no plan sees no plan card', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const key = (await server.request('POST', '/portal/v1/keys', { headers: user.headers, body: { name: 'solo' } })).body.data;
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  t.after(() => context.close());
  const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await signInThroughForm(page, user);
  const free = page.locator('section.plan-meters[aria-busy="false"] .plan-meter[data-plan-id="free"]');
  await free.waitFor();
  const facts = await factsOf(free);
  assert.equal(facts.Quota, 'no quota');
  assert.equal(facts['Per minute'], '100 requests, shared by your key on Free');
  assert.equal(await free.locator('.quota-shares').count(), 0);

  // The operator gives the key a limit of its own: it leaves the plan, and no plan card is left.
  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${key.id}`, { rate_limit: 50 })).status, 200);
  await page.reload();
  await page.locator('section.plan-meters[aria-busy="false"] .empty').waitFor();
  assert.equal(await page.locator('.plan-meter').count(), 0);
  assert.deepEqual(watch.problems(), []);
});
