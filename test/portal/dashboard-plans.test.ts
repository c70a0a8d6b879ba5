// The operator dashboard's Plans page in headless Chromium against a real server: a pending plan
// request is approved with its button (after confirming), and the key's X-RateLimit-Limit
// changes on its next request; another is declined. Skipped only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { findChromium, launchChromium, watchPages } from '../dashboard/browser.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

const search = findChromium();

test('dashboard Plans page: approve and decline plan requests', { skip: search.found ? false : search.reason, timeout: 60_000 }, async (t) => {
  assert.ok(search.found);
  const server = await startServer(t);
  const { key, keyId, userId } = await server.userWithKey('member', ['read:listings'], 100);
  const request = (id: string): PlanRequestRecord => ({ id, key_id: keyId, user_id: userId, plan: 'business', status: 'pending', created_at: new Date().toISOString(), decided_at: null });
  await server.app.store.write([
    { op: 'put', collection: PLAN_REQUESTS, id: 'prq_approveMe', data: request('prq_approveMe') },
    { op: 'put', collection: PLAN_REQUESTS, id: 'prq_declineMe', data: request('prq_declineMe') },
  ]);

  const browser = await launchChromium(search.path);
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const watch = await watchPages(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(`${server.url}/dashboard`);
  await page.locator('#token').fill(ADMIN_TOKEN);
  await page.locator('#sign-in-button').click();
  await page.locator('.users-panel').waitFor();
  await page.locator('button.tab[data-page="plans"]').click();
  await page.locator('tr[data-request-id="prq_approveMe"]').waitFor();
  assert.match((await page.locator('.plans-table').textContent()) ?? '', /Business.*10,000.*on request/);

  await page.locator('tr[data-request-id="prq_approveMe"]').getByRole('button', { name: /^Approve / }).click();
  await page.locator('dialog').getByRole('button', { name: 'Approve' }).click();
  await page.locator('tr[data-request-id="prq_approveMe"] .badge.ok').waitFor();
  const limited = await server.request('GET', '/v1/listings', { key });
  assert.equal(limited.headers.get('x-ratelimit-limit'), '10000', 'approved in the dashboard: the next request has the new limit');

  await page.locator('tr[data-request-id="prq_declineMe"]').getByRole('button', { name: /^Decline / }).click();
  await page.locator('dialog').getByRole('button', { name: 'Decline' }).click();
  await page.locator('tr[data-request-id="prq_declineMe"] .badge.danger').waitFor();
  const decided = await server.admin('GET', '/admin/v1/plan-requests?status=pending');
  assert.equal(decided.body.pagination.total, 0);
  assert.deepEqual(watch.problems(), []);
});
