// A password link (an invitation or a reset) opened while someone is signed in, in headless
// Chromium at 390 px against a real server: the page says who is signed in and offers to sign out
// first; signing out continues with the link, whose password form then signs in as the account it
// was made for. The token leaves the address bar and is not there to go back to, whether the link
// is pasted into a tab already on /portal or opened in a new one. Skipped, with the reason, only
// when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { signedInUser, signIn } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

async function linkFor(server: TestServer, userId: string): Promise<string> {
  return (await server.admin('POST', `/admin/v1/users/${userId}/invitations`)).body.data.url as string;
}

/** No address this tab has been at, now or one step back, holds the token. */
async function tokenGone(page: Page, what: string): Promise<void> {
  assert.ok(!page.url().includes('invitation'), `${what}: the token left the address bar (${page.url()})`);
  await page.goBack();
  assert.ok(!page.url().includes('invitation'), `${what}: one step back holds no token either (${page.url()})`);
  await page.goForward();
}

test('a link for another account, opened while signed in, offers "sign out first"; signing out continues with the link', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t);
  const signedIn = await signedInUser(server, { name: 'Ada Signed-In' });
  const invited = await server.createUser({ role: 'member', name: 'Grace Invited', email: `grace-${process.pid}@example.com` });
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  t.after(() => context.close());
  // Once signed out, the page's question "who is signed in?" is answered 401: expected.
  const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await signInThroughForm(page, signedIn);

  // Pasted into this tab: the page says who is signed in and what the link does.
  await page.goto(await linkFor(server, invited.id));
  const choice = page.locator('#invitation-choice');
  await choice.waitFor({ timeout: 10_000 });
  assert.match(await choice.innerText(), new RegExp(signedIn.email.replace(/[.]/g, '\\.')));
  await tokenGone(page, 'pasted while signed in');
  await choice.locator('button', { hasText: 'Sign out first' }).click();

  // Signed out, the link's password form follows.
  await page.locator('#set-password-form').waitFor({ timeout: 10_000 });
  const stillIn = await page.evaluate(async () => (await fetch('/portal/v1/me')).status);
  assert.equal(stillIn, 401, 'this browser is signed out of the other account');
  const password = 'grace chooses a long passphrase';
  await page.locator('#set-password-form input[name=new-password]').fill(password);
  await page.locator('#set-password-form input[name=repeat-password]').fill(password);
  await page.locator('#set-password-button').click();
  await page.locator('#sign-out').waitFor();
  assert.match(await page.locator('#session .who').innerText(), /Grace Invited/);
  await signIn(server, `grace-${process.pid}@example.com`, password);
  assert.deepEqual(watch.problems(), []);
});

test('a link opened in a new tab while signed in offers the same choice, and "not now" goes back to the signed-in pages', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t);
  const signedIn = await signedInUser(server);
  const invited = await server.createUser({ role: 'member', name: 'Someone Else', email: `else-${process.pid}@example.com` });
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  t.after(() => context.close());
  const [name, value] = signedIn.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: server.url }]);
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await page.locator('#sign-out').waitFor();
  // A new tab, straight at the link.
  const other = await context.newPage();
  await other.goto(await linkFor(server, invited.id));
  const choice = other.locator('#invitation-choice');
  await choice.waitFor({ timeout: 10_000 });
  assert.ok(!other.url().includes('invitation'), `the token left the address bar (${other.url()})`);
  await choice.locator('button', { hasText: 'Not now' }).click();
  await other.locator('.portal-keys').waitFor();
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: signedIn.headers })).status, 200, 'still signed in');
});
