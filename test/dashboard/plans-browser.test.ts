// The operator's Plans page in headless Chromium against a real server: it names each request's
// user (name and email) and key (name and current plan), counts the pending requests on its tab,
// and calls the thing "Plan" everywhere in the dashboard, never "Tier".
// Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findChromium, sharedChromium, watchPages } from './browser.ts';
import { signedInUser } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

test("the operator's Plans page names users and keys, counts pending requests on its tab, and says Plan, not Tier", { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server, { name: 'Ada Lovelace', email: `ada-${process.pid}@example.com` });
  const grace = await signedInUser(server, { name: 'Grace Hopper', email: `grace-${process.pid}@example.com` });
  const portal = (who: typeof ada, method: string, path: string, body?: unknown) => server.request(method, `/portal/v1${path}`, { headers: who.headers, body });
  const adaKey = (await portal(ada, 'POST', '/keys', { name: 'Ada analytics' })).body.data;
  const graceKey = (await portal(grace, 'POST', '/keys', { name: 'Grace compiler' })).body.data;
  const asked = await Promise.all([
    portal(ada, 'POST', '/plan-requests', { key_id: adaKey.id, plan: 'business' }),
    portal(grace, 'POST', '/plan-requests', { key_id: graceKey.id, plan: 'business' }),
  ]);
  assert.deepEqual(asked.map((response) => response.status), [201, 201]);

  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const watch = await watchPages(context, []);
  const page = await context.newPage();
  await page.goto(`${server.url}/dashboard`);
  await page.locator('#token').fill(ADMIN_TOKEN);
  await page.locator('#sign-in-button').click();
  await page.locator('.users-panel').waitFor();

  const tab = page.locator('.tab[data-page=plans]');
  await tab.filter({ hasText: '2' }).waitFor();
  assert.match(await tab.innerText(), /Plans.*2/s);
  await tab.click();
  const table = page.locator('.plan-requests-table');
  await table.locator('td', { hasText: 'Grace Hopper' }).waitFor();
  const text = await table.innerText();
  for (const words of ['Ada Lovelace', ada.email, 'Ada analytics', 'Grace Hopper', grace.email, 'Grace compiler']) assert.ok(text.includes(words), `the table shows ${words}`);
  assert.match(text, /Free/, "each key's current plan");
  assert.doesNotMatch(text, /\b(usr|key)_\w+/, 'no raw ids');

  // Approving one leaves one pending on the tab.
  await table.locator('tr', { hasText: 'Ada Lovelace' }).locator('button', { hasText: 'Approve' }).click();
  await page.locator('dialog[open] button', { hasText: 'Approve' }).click();
  await tab.filter({ hasText: /Plans\s*1/ }).waitFor();

  // Nowhere a person reads "Tier": the users page with a key and its change dialog.
  await page.locator('.tab[data-page=users]').click();
  await page.locator('.users-panel', { hasText: 'Grace Hopper' }).waitFor();
  await page.locator('.users-panel button, .users-panel a', { hasText: 'Grace Hopper' }).first().click();
  const keyRow = page.locator('tr', { hasText: 'Grace compiler' });
  await keyRow.waitFor();
  assert.doesNotMatch(await page.locator('main, body').first().innerText(), /\btier\b/i);
  await keyRow.locator('button', { hasText: /^Plan$/ }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor();
  assert.doesNotMatch(await dialog.innerText(), /\btier\b/i);
  assert.deepEqual(watch.problems(), []);
});
