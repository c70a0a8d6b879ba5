// Two-factor sign-in on the portal page in headless Chromium at 390 px: turn it on from the
// profile (the secret shown once as text with its otpauth:// URI, confirmed with a code made by
// the independent otpauth package, the recovery codes shown once), sign out, sign in with the
// password and then the code; no sideways scrolling on any of these screens. Skipped only when
// no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { findChromium, launchChromium, watchPages } from '../dashboard/browser.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';
import { codeAt } from '../helpers/two-factor.ts';

const search = findChromium();

test('Chromium at 390 px: enrol from the profile, sign out, sign in with password then code', { skip: search.found ? false : search.reason, timeout: 120_000 }, async (t) => {
  if (!search.found) return;
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const browser = await launchChromium(search.path);
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  await context.addCookies([{ name: ada.cookie.split('=')[0]!, value: ada.cookie.split('=')[1]!, url: server.url }]);
  // Loading the page asks who is signed in; after signing out that is a 401.
  const watch = await watchPages(context, [/status of 401/]);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const noSidewaysScroll = async (what: string) =>
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), `${what}: no sideways scrolling at 390 px`);

  await page.goto(`${server.url}/portal`);
  await page.locator('button.tab', { hasText: 'Profile' }).click();
  await page.locator('#two-factor-enrol-form').getByLabel('Current password').fill(ada.password);
  await page.locator('#two-factor-enrol-button').click();
  const secret = (await page.locator('#two-factor-secret').inputValue()).replaceAll(' ', '');
  const uri = await page.locator('#two-factor-uri').inputValue();
  assert.equal((OTPAuth.URI.parse(uri) as OTPAuth.TOTP).secret.base32, secret, 'the URI holds the secret shown as text');
  await noSidewaysScroll('the secret');
  await page.locator('#two-factor-code').fill(codeAt(secret, Date.now()));
  await page.locator('#two-factor-confirm-button').click();
  await page.locator('#recovery-codes li').first().waitFor();
  assert.equal(await page.locator('#recovery-codes li').count(), 10);
  await noSidewaysScroll('the recovery codes');
  await page.locator('#recovery-codes-hide').click();
  await page.locator('#two-factor-disable-form').waitFor();

  await page.locator('#sign-out').click();
  await page.locator('#sign-in-form').waitFor();
  await page.getByLabel('Email').fill(ada.email);
  await page.getByLabel('Password').fill(ada.password);
  await page.locator('#sign-in-button').click();
  await page.locator('#second-factor-form').waitFor();
  await noSidewaysScroll('the code step');
  // The next step's code: the one used to confirm is not accepted again.
  await page.locator('#second-factor-form').getByLabel('Code', { exact: true }).fill(codeAt(secret, Date.now() + 30_000));
  await page.locator('#second-factor-button').click();
  await page.locator('#keys-title').waitFor();
  assert.deepEqual(watch.problems(), []);
});
