// The operator's quotas in the dashboard (contract section 23), in headless Chromium against a
// real server at 390 and 1280 px: the Plans page edits a plan's quota (a refused number is said
// under its field, from the server's 400), the API's X-Quota-* headers and its 429 follow the
// saved quota for a real key; the key's usage shows the count, and its top-up (give back, or set
// the count) changes what the page and the API report. No sideways scroll at 390 px; axe finds
// nothing serious or critical. Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { findChromium, sharedChromium, watchPages } from './browser.ts';
import { loadAxe, seriousFindings, sidewaysScroll } from '../helpers/axe.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

async function openTab(page: Page, tab: string): Promise<void> {
  await page.locator(`.tab[data-page=${tab}]`).click();
}

test("the operator edits a plan's quota, the API follows it, and a top-up from the key's usage changes what the page and the API report", { skip, timeout: 300_000 }, async (t) => {
  // The server's clock stands still at the real time, so no UTC midnight can reset a count mid-test.
  const server = await startServer(t, { clock: new ManualClock(Date.now()) });
  const browser = await browserFor(t);
  const findings: string[] = [];
  for (const width of [390, 1280]) {
    // A new user each time, so each pass starts its count at 0; a month quota on the second.
    const quota = width === 390 ? { requests: 3, period: 'day', words: '3 a day', periodWords: 'today (UTC)' } : { requests: 4, period: 'month', words: '4 a month', periodWords: 'this month (UTC)' };
    const name = `Quota User ${width}`;
    const user = await server.createUser({ name, email: `quota-${width}-${process.pid}@example.com` });
    const made = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, name: 'metered', plan: 'free', permissions: ['read:listings'] });
    assert.equal(made.status, 201, made.text);
    const key = made.body.data;
    const call = () => server.request('GET', '/v1/listings', { headers: { authorization: `Bearer ${key.key}` } });

    const context = await browser.newContext({ viewport: { width, height: 900 } });
    t.after(() => context.close());
    // The refused quota and the refused top-up are 400s the browser logs itself: expected.
    const watch = await watchPages(context, [/status of 400 \(Bad Request\)/]);
    await loadAxe(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard`);
    await page.locator('#token').fill(ADMIN_TOKEN);
    await page.locator('#sign-in-button').click();
    await page.locator('.users-panel').waitFor();

    // 1. The plan editor: a refused number under its field, then a quota saved.
    await openTab(page, 'plans');
    const freeRow = page.locator('.plans-table tbody tr', { hasText: 'free' });
    await freeRow.waitFor();
    await freeRow.locator('button', { hasText: 'Edit quota' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    await dialog.locator('#dialog-quota-requests').fill('0');
    await dialog.locator('button[type=submit]').click();
    const problem = dialog.locator('.field-problem');
    await problem.waitFor();
    assert.equal(await problem.innerText(), 'Requests must be an integer from 1 to 1000000000.');
    assert.equal(await dialog.locator('#dialog-quota-requests').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement.id), 'dialog-quota-requests', `${width} px: the refused field has the focus`);
    assert.deepEqual((await server.admin('GET', '/admin/v1/plans')).body.data[0].quota, width === 390 ? null : { requests: 3, period: 'day' }, 'a refused quota changes nothing');
    findings.push(...(await seriousFindings(page, `${width} px plan editor, refused`)));

    await dialog.locator('#dialog-quota-requests').fill(String(quota.requests));
    await dialog.locator('#dialog-quota-period').selectOption(quota.period);
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.plans-table tbody tr', { hasText: quota.words }).waitFor();
    assert.deepEqual((await server.admin('GET', '/admin/v1/plans')).body.data[0].quota, { requests: quota.requests, period: quota.period });
    assert.ok((await sidewaysScroll(page)) <= 0, `${width} px: the Plans page scrolls sideways`);
    findings.push(...(await seriousFindings(page, `${width} px plans with a quota`)));

    // 2. The API follows the saved quota: headers counting down, then the quota's 429.
    const remaining: string[] = [];
    for (let index = 0; index < quota.requests; index += 1) {
      const answer = await call();
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('x-quota-limit'), String(quota.requests));
      remaining.push(answer.headers.get('x-quota-remaining')!);
    }
    assert.deepEqual(remaining, Array.from({ length: quota.requests }, (_, index) => String(quota.requests - 1 - index)));
    const refused = await call();
    assert.equal(refused.status, 429);
    assert.equal(refused.body.quota.period, quota.period);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);

    // 3. The key's usage shows the count; the top-up changes it, on the page and in the API.
    await openTab(page, 'users');
    await page.locator('.users-panel', { hasText: name }).getByText(name).first().click();
    await page.locator('#user-title', { hasText: name }).waitFor();
    await page.locator(`tr[data-key-id="${key.id}"] button`, { hasText: 'Usage' }).click();
    const usage = page.locator('section.usage[aria-busy="false"]');
    const quotaStat = usage.locator('.stat.quota');
    await quotaStat.waitFor();
    assert.match(await quotaStat.innerText(), new RegExp(`${quota.requests} of ${quota.requests} used ${quota.periodWords.replace(/[()]/g, '\\$&')}`));
    assert.match(await quotaStat.innerText(), /0 left; resets /);
    findings.push(...(await seriousFindings(page, `${width} px key usage with a quota`)));

    await usage.locator('button', { hasText: 'Top up quota' }).click();
    await dialog.waitFor();
    await dialog.locator('#dialog-quota-add').fill('0');
    await dialog.locator('button[type=submit]').click();
    await dialog.locator('.field-problem').waitFor();
    assert.match(await dialog.locator('.field-problem').innerText(), /^Requests to give back must be /);
    findings.push(...(await seriousFindings(page, `${width} px top-up, refused`)));
    await dialog.locator('#dialog-quota-add').fill('2');
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'detached' });
    const given = `${quota.requests - 2} of ${quota.requests} used`;
    await page.locator('section.usage[aria-busy="false"] .stat.quota', { hasText: given }).waitFor();
    assert.match(await page.locator('#notice').innerText(), new RegExp(`${given}, 2 left`));
    const read = await server.admin('GET', `/admin/v1/keys/${key.id}/usage`);
    assert.equal(read.body.data.quota.used, quota.requests - 2, 'the API reports the top-up');
    const after = await call();
    assert.equal(after.status, 200, 'the key is answered again');
    assert.equal(after.headers.get('x-quota-remaining'), '1');

    // Setting the count: back to all used, and the API refuses again.
    await page.locator('section.usage button', { hasText: 'Top up quota' }).click();
    await dialog.waitFor();
    await dialog.locator('#dialog-quota-used').fill(String(quota.requests));
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('section.usage[aria-busy="false"] .stat.quota', { hasText: `${quota.requests} of ${quota.requests} used` }).waitFor();
    assert.equal((await call()).status, 429, 'the count set to the quota: refused');
    assert.equal((await server.admin('GET', `/admin/v1/keys/${key.id}/usage`)).body.data.quota.remaining, 0);
    assert.ok((await sidewaysScroll(page)) <= 0, `${width} px: the user page scrolls sideways`);

    if (width === 1280) {
      // No quota: the plan's keys carry no quota headers, and their usage shows none.
      await openTab(page, 'plans');
      await page.locator('.plans-table tbody tr', { hasText: 'free' }).locator('button', { hasText: 'Edit quota' }).click();
      await dialog.locator('label', { hasText: 'No quota' }).click();
      await dialog.locator('button[type=submit]').click();
      await dialog.waitFor({ state: 'detached' });
      await page.locator('.plans-table tbody tr', { hasText: 'free' }).filter({ hasText: 'no quota' }).waitFor();
      const free = await call();
      assert.equal(free.status, 200);
      assert.equal(free.headers.get('x-quota-limit'), null);

      // Saving the quota it already has replaces nothing: no new plans.replace in the audit.
      const replaced = (await server.admin('GET', '/admin/v1/audit?action=plans.replace')).body.data.length;
      await page.locator('.plans-table tbody tr', { hasText: 'free' }).locator('button', { hasText: 'Edit quota' }).click();
      await dialog.locator('button[type=submit]').click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal((await server.admin('GET', '/admin/v1/audit?action=plans.replace')).body.data.length, replaced);
    }
    assert.deepEqual(watch.problems(), []);
  }
  assert.deepEqual(findings, []);
});
