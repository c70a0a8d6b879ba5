// axe-core on every screen of /portal and /dashboard, at 390 and 1280 px, in headless Chromium
// against a real server: no finding of impact serious or critical under the WCAG 2.2 AA rules
// (contrast, names and labels, target sizes...). axe is added as an init script, which comes
// through the DevTools protocol and so is not blocked by the pages' Content-Security-Policy.
// Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm } from '../dashboard/browser.ts';
import { portalPageWithAxe, seriousFindings } from '../helpers/axe.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const WIDTHS = [390, 1280] as const;

const browserFor = sharedChromium(search);

/** A new page `width` px wide, with axe loaded into every document it opens, at `url`'s sign-in form. */
async function axePage(t: TestContext, width: number, url: string): Promise<{ page: Page; problems: () => string[] }> {
  return portalPageWithAxe(t, await browserFor(t), url, width);
}

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

/** A creator with a live, a revoked and an expired key and a webhook: every kind of card is drawn. */
async function seeded(server: TestServer): Promise<PortalUser> {
  const user = await signedInUser(server, { role: 'creator' });
  await portal(server, user, 'POST', '/keys', { name: 'live key' });
  const revoked = (await portal(server, user, 'POST', '/keys', { name: 'old key' })).body.data;
  await portal(server, user, 'DELETE', `/keys/${revoked.id}`);
  const expiring = (await portal(server, user, 'POST', '/keys', { name: 'short key', expires_at: new Date(Date.now() + 300).toISOString() })).body.data;
  await portal(server, user, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['ping'] });
  await eventually(async () => Date.now() > Date.parse(expiring.expires_at), 5_000, 'the key expires');
  return user;
}

test('axe finds nothing serious or critical on any /portal screen at 390 and 1280 px', { skip, timeout: 240_000 }, async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const user = await seeded(server);
  const findings: string[] = [];
  for (const width of WIDTHS) {
    const { page, problems } = await axePage(t, width, `${server.url}/portal`);
    findings.push(...(await seriousFindings(page, `${width} px sign-in`)));

    await signInThroughForm(page, user);
    await page.locator('[data-key-id]').first().waitFor();
    findings.push(...(await seriousFindings(page, `${width} px keys`)));

    await page.locator('[data-key-id] button', { hasText: /^Usage$/ }).first().click();
    await page.locator('section.usage[aria-busy="false"], .usage[aria-busy="false"]').first().waitFor();
    findings.push(...(await seriousFindings(page, `${width} px usage`)));

    await page.locator('[data-key-id] button', { hasText: /^Plan$/ }).first().click();
    await page.locator('dialog[open]').waitFor();
    findings.push(...(await seriousFindings(page, `${width} px plans`)));
    await page.keyboard.press('Escape');
    await page.locator('dialog[open]').waitFor({ state: 'detached' });

    for (const [tab, ready] of [
      ['webhooks', '[data-webhook-id]'],
      ['listings', '.view form, .view .empty, .view ul'],
      ['security', '.view .session-card'],
      ['profile', '.view form'],
    ] as const) {
      await page.locator(`.tab[data-page=${tab}]`).click();
      await page.locator(ready).first().waitFor();
      findings.push(...(await seriousFindings(page, `${width} px ${tab}`)));
    }

    // A refused form: the problem under its field, and under the form's fields.
    await page.locator('#profile-form input[name=website]').fill('not a web address');
    await page.locator('#profile-form button[type=submit]').click();
    await page.locator('#profile-form .field-problem').waitFor();
    findings.push(...(await seriousFindings(page, `${width} px refused form`)));

    // A password link opened while signed in: the choice offered first.
    await page.goto((await server.admin('POST', `/admin/v1/users/${user.userId}/invitations`)).body.data.url);
    await page.locator('#invitation-choice').waitFor();
    findings.push(...(await seriousFindings(page, `${width} px password link while signed in`)));
    // The browser logs the refused profile (400) itself: expected.
    assert.deepEqual(problems().filter((line) => !/status of 400 \(Bad Request\)/.test(line)), []);
  }
  assert.deepEqual(findings, []);
});

test('axe finds nothing serious or critical on any /dashboard screen at 390 and 1280 px', { skip, timeout: 240_000 }, async (t) => {
  const server = await startServer(t);
  const user = await server.createUser({ role: 'creator', name: 'Ada Lovelace', email: 'ada@example.com' });
  await server.createKey(user.id, { name: 'first key' });
  const findings: string[] = [];
  for (const width of WIDTHS) {
    const { page, problems } = await axePage(t, width, `${server.url}/dashboard`);
    findings.push(...(await seriousFindings(page, `${width} px sign-in`)));

    await page.locator('#token').fill(ADMIN_TOKEN);
    await page.locator('#sign-in-button').click();
    await page.locator('.users-panel').waitFor();
    await page.locator('.users-panel li, .users-panel tr').first().waitFor();
    findings.push(...(await seriousFindings(page, `${width} px users`)));

    await page.locator('.users-panel', { hasText: 'Ada Lovelace' }).getByText('Ada Lovelace').first().click();
    await page.locator('#user-title').waitFor();
    findings.push(...(await seriousFindings(page, `${width} px user detail`)));

    for (const tab of ['listings', 'plans', 'audit']) {
      await page.locator(`.tab[data-page=${tab}]`).click();
      await page.locator('.view > *').first().waitFor();
      await eventually(async () => (await page.locator('[aria-busy="true"]').count()) === 0, 10_000, `the ${tab} page is loaded`);
      findings.push(...(await seriousFindings(page, `${width} px ${tab}`)));
    }
    assert.deepEqual(problems(), []);
  }
  assert.deepEqual(findings, []);
});
