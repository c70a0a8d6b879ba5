// What a person sees in the portal, in headless Chromium against a real server: each key's plan
// request (pending with a way to cancel, declined with the operator's note; no plan change for
// an expired key), webhook deliveries coloured by their state with the receiver's HTTP status or
// "no answer" and the next retry, sent again from the page, and a ready first request (curl and
// fetch) beside a new key's secret, focus on the card once a secret is hidden, and the welcome
// after choosing a password left to be read, a refused field marked under that field, and the
// preview of a new key's permissions in words, routes included. Skipped, with the reason, only
// when no Chromium is found.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };

const browserFor = sharedChromium(search);

/** A page at /portal, signed in as `user` through the sign-in form, `width` px wide. */
async function signedInPage(t: TestContext, server: TestServer, user: PortalUser, width = 1280): Promise<{ page: Page; problems: () => string[] }> {
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  t.after(() => context.close());
  // The page's first question, GET /portal/v1/me before signing in, is answered 401: expected.
  const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await signInThroughForm(page, user);
  return { page, problems: watch.problems };
}

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('each key card shows its plan request: pending with Cancel, declined with the note; an expired key offers no plan', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const asking = (await portal(server, user, 'POST', '/keys', { name: 'asking' })).body.data;
  const refused = (await portal(server, user, 'POST', '/keys', { name: 'refused' })).body.data;
  const expiring = (await portal(server, user, 'POST', '/keys', { name: 'expiring', expires_at: new Date(Date.now() + 500).toISOString() })).body.data;
  await portal(server, user, 'POST', '/plan-requests', { key_id: asking.id, plan: 'business' });
  const declined = (await portal(server, user, 'POST', '/plan-requests', { key_id: refused.id, plan: 'business' })).body.data;
  await server.admin('POST', `/admin/v1/plan-requests/${declined.id}/decline`, { note: 'Write to sales first.' });
  await eventually(async () => Date.now() > Date.parse(expiring.expires_at), 5_000, 'the key expires');

  const { page, problems } = await signedInPage(t, server, user);
  const askingCard = page.locator(`[data-key-id="${asking.id}"]`);
  const request = askingCard.locator('.plan-request');
  await request.waitFor({ timeout: 10_000 });
  assert.match(await request.innerText(), /Business.*pending/is);
  const refusedText = await page.locator(`[data-key-id="${refused.id}"] .plan-request`).innerText();
  assert.match(refusedText, /declined/i);
  assert.match(refusedText, /Write to sales first\./);
  assert.equal(await page.locator(`[data-key-id="${expiring.id}"] button`, { hasText: /^Plan$/ }).count(), 0, 'no plan for an expired key');

  await askingCard.locator('button', { hasText: 'Cancel request' }).click();
  await page.locator('dialog[open] button', { hasText: 'Cancel the request' }).click();
  await eventually(async () => /cancelled/i.test(await page.locator(`[data-key-id="${asking.id}"] .plan-request`).innerText()), 10_000, 'the card says cancelled');
  const listed = await portal(server, user, 'GET', `/plan-requests?key_id=${asking.id}`);
  assert.equal(listed.body.data[0].status, 'cancelled');
  assert.deepEqual(problems(), []);
});

test('deliveries are coloured by state, with the HTTP status or "no answer" and the next retry, and can be sent again', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const good = await startReceiver(t, answer(204));
  const failing = await startReceiver(t, answer(503));
  const user = await signedInUser(server);
  const delivered = (await portal(server, user, 'POST', '/webhooks', { url: good.url, events: ['ping'] })).body.data;
  const retrying = (await portal(server, user, 'POST', '/webhooks', { url: failing.url, events: ['ping'] })).body.data;
  const dead = (await portal(server, user, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['ping'] })).body.data;
  for (const webhook of [delivered, retrying, dead]) {
    await eventually(async () => (await portal(server, user, 'GET', `/webhooks/${webhook.id}/deliveries`)).body.data.length === 1, 10_000, `the ping to ${webhook.url}`);
  }

  const { page, problems } = await signedInPage(t, server, user);
  await page.locator('.tab[data-page=webhooks]').click();
  const card = (webhookId: string) => page.locator(`[data-webhook-id="${webhookId}"]`);
  await card(dead.id).waitFor();
  assert.match(await card(delivered.id).locator('.last-delivery').innerText(), /delivered.*HTTP 204/is);
  assert.match(await card(retrying.id).locator('.last-delivery').innerText(), /retrying.*HTTP 503/is);

  for (const [webhook, state, words] of [
    [delivered, 'delivered', /HTTP 204/],
    [retrying, 'retrying', /HTTP 503.*next try/is],
    [dead, 'retrying', /no answer/i],
  ] as const) {
    await card(webhook.id).locator('button', { hasText: 'Deliveries' }).click();
    const row = card(webhook.id).locator('.deliveries li').first();
    await row.waitFor();
    assert.equal(await row.getAttribute('data-state'), state);
    assert.match(await row.innerText(), words);
  }
  const colour = async (webhookId: string) => card(webhookId).locator('.deliveries li').first().evaluate((node) => (globalThis as any).getComputedStyle(node).borderLeftColor);
  assert.notEqual(await colour(delivered.id), await colour(retrying.id), 'a success does not look like a failure');

  await card(delivered.id).locator('.deliveries li').first().locator('button', { hasText: 'Send again' }).click();
  await eventually(async () => good.received.length === 2, 10_000, 'the redelivery arrives');
  assert.equal(good.received[1]!.headers['webhook-id'], good.received[0]!.headers['webhook-id']);
  await eventually(async () => (await card(delivered.id).locator('.deliveries li').count()) === 2, 10_000, 'the list shows the new attempt');
  assert.deepEqual(problems(), []);
});

test('a new key comes with a ready curl and fetch line against this server, with a copy button', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const { page, problems } = await signedInPage(t, server, user, 390);
  await page.locator('#create-key-button').click();
  const secret = await page.locator('#new-key-secret').inputValue();
  const snippet = page.locator('.first-request');
  await snippet.waitFor();
  const text = await snippet.innerText();
  assert.ok(text.includes(`curl -H 'Authorization: Bearer ${secret}' ${server.url}/v1/listings`), text);
  assert.ok(text.includes(`fetch('${server.url}/v1/listings', { headers: { Authorization: 'Bearer ${secret}' } })`), text);
  assert.equal(await snippet.locator('button', { hasText: /Copy/ }).count(), 2);
  assert.match(await page.locator('.portal-keys > .hint').innerText(), new RegExp(`${server.url.replace(/[.]/g, '\\.')}/v1`));
  // The line works as it stands.
  const listed = await fetch(`${server.url}/v1/listings`, { headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(listed.status, 200);
  assert.deepEqual(problems(), []);
});

test('"Create an account" is offered only when PORTAL_SIGNUP=open; the page knows before showing the form', { skip, timeout: 120_000 }, async (t) => {
  const browser = await browserFor(t);
  for (const [signup, offered] of [['invite', 0], ['open', 1]] as const) {
    const server = await startServer(t, { env: { ...ENV, PORTAL_SIGNUP: signup } });
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    t.after(() => context.close());
    const page = await context.newPage();
    await page.goto(`${server.url}/portal`);
    await page.locator('#sign-in-form').waitFor();
    assert.equal(await page.locator('#entrance button', { hasText: 'Create an account' }).count(), offered, `PORTAL_SIGNUP=${signup}`);
  }
});

test("the Security page's activity lists the sign-in just made, with its address and browser, newest first", { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  await portal(server, user, 'POST', '/keys', { name: 'laptop' });
  const { page, problems } = await signedInPage(t, server, user, 390);
  await page.locator('.tab[data-page=security]').click();
  const first = page.locator('.activity li').first();
  await first.waitFor();
  const text = await first.innerText();
  assert.match(text, /Signed in/);
  assert.match(text, /127\.0\.0\.1/);
  assert.match(text, /HeadlessChrome|Chrome/);
  assert.ok((await page.locator('.activity li', { hasText: 'Key created' }).count()) >= 1);
  assert.deepEqual(problems(), []);
});

test('an invitation link pasted into a tab already on /portal is followed, signed out or in, its token leaves the address bar, and the welcome stays to be read', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await page.locator('#sign-in-form').waitFor();

  // Signed out: the fragment changes in the same tab.
  const first = (await server.admin('POST', `/admin/v1/users/${user.userId}/invitations`)).body.data.url as string;
  await page.goto(first);
  await page.locator('#set-password-form').waitFor({ timeout: 10_000 });
  assert.ok(!page.url().includes('invitation'), `the token left the address bar: ${page.url()}`);
  const newPassword = 'a brand new passphrase 1';
  await page.locator('#set-password-form input[name=new-password]').fill(newPassword);
  await page.locator('#set-password-form input[name=repeat-password]').fill(newPassword);
  await page.locator('#set-password-button').click();
  await page.locator('#sign-out').waitFor();
  // The welcome is still there to be read once the keys page shows.
  await page.locator('.portal-keys').waitFor();
  assert.match(await page.locator('#notice').innerText(), /Welcome/);

  // Signed in: a reset link for the same account, pasted into the same tab, used for this account.
  const second = (await server.admin('POST', `/admin/v1/users/${user.userId}/invitations`)).body.data.url as string;
  await page.goto(second);
  await page.locator('#invitation-continue').click();
  await page.locator('#set-password-form').waitFor({ timeout: 10_000 });
  assert.ok(!page.url().includes('invitation'), `the token left the address bar while signed in: ${page.url()}`);
  const historyHasToken = await page.evaluate(() => (globalThis as any).location.href.includes('invitation'));
  assert.equal(historyHasToken, false);
  const third = 'another brand new passphrase 2';
  await page.locator('#set-password-form input[name=new-password]').fill(third);
  await page.locator('#set-password-form input[name=repeat-password]').fill(third);
  await page.locator('#set-password-button').click();
  await page.locator('#sign-out').waitFor();
  const signIn = await server.request('POST', '/portal/v1/session', { headers: { origin: server.url }, body: { email: user.email, password: third } });
  assert.equal(signIn.status, 201, 'the new password works');
});

test('at 390 px every button of the keys and webhooks pages is at least 44 px tall', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  await portal(server, user, 'POST', '/keys', { name: 'laptop' });
  const { page } = await signedInPage(t, server, user, 390);
  await page.locator('.key-card').first().waitFor();
  for (const tab of ['keys', 'webhooks']) {
    await page.locator(`.tab[data-page=${tab}]`).click();
    await page.locator('.view section').first().waitFor();
    const heights = await page.locator('button:visible').evaluateAll((buttons) => buttons.map((button) => [(button as any).textContent.trim(), Math.round((button as any).getBoundingClientRect().height)] as const));
    const small = heights.filter(([, height]) => height < 44);
    assert.deepEqual(small, [], `buttons under 44 px on ${tab}`);
  }
});

test('hiding a new key\'s secret or a webhook\'s signing secret moves focus to its card, not to the page', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const { page, problems } = await signedInPage(t, server, user, 390);
  const focused = () => page.evaluate(() => {
    const active = (globalThis as any).document.activeElement;
    const card = active.closest('[data-key-id], [data-webhook-id]');
    return { tag: active.tagName, card: card?.dataset.keyId ?? card?.dataset.webhookId ?? null };
  });
  await page.locator('#create-key-button').click();
  await page.locator('#new-key-secret').waitFor();
  await page.locator('#new-key-secret-hide').click();
  await page.locator('#new-key-secret').waitFor({ state: 'detached' });
  const key = (await portal(server, user, 'GET', '/keys')).body.data[0];
  assert.deepEqual(await focused(), { tag: 'H3', card: key.id });

  await page.locator('.tab[data-page=webhooks]').click();
  // With no webhook yet, the register form is open.
  await page.locator('#webhook-form input[name=webhook-url]').fill('http://127.0.0.1:9/hook');
  await page.locator('#webhook-form button[type=submit]').click();
  await page.locator('#webhook-secret-hide').click();
  await page.locator('#webhook-secret').waitFor({ state: 'detached' });
  const webhook = (await portal(server, user, 'GET', '/webhooks')).body.data[0];
  assert.deepEqual(await focused(), { tag: 'H3', card: webhook.id });
  assert.deepEqual(problems(), []);
});

test('a field the server refuses in the new-key form is marked under that field, in words, with no request id', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const { page, problems } = await signedInPage(t, server, user, 390);
  const expires = page.locator('#create-key-form input[name=expires-at]');
  await expires.fill('2001-01-01T10:00');
  await page.locator('#create-key-button').click();
  const problem = page.locator('#create-key-form .field-problem');
  await problem.waitFor();
  assert.match(await problem.innerText(), /future/i);
  assert.equal(await expires.getAttribute('aria-invalid'), 'true');
  assert.ok(((await expires.getAttribute('aria-describedby')) ?? '').split(' ').includes((await problem.getAttribute('id'))!));
  assert.doesNotMatch(await problem.innerText(), /request/i);
  assert.equal(await page.locator('#notice').isVisible(), false, 'no message over the form');
  // The browser logs the refused request (400) itself: expected.
  assert.deepEqual(problems().filter((line) => !/status of 400 \(Bad Request\)/.test(line)), []);
});

test('a field the server refuses in the profile form is marked under that field', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server);
  const { page } = await signedInPage(t, server, user, 390);
  await page.locator('.tab[data-page=profile]').click();
  const website = page.locator('#profile-form input[name=website]');
  await website.fill('not a web address');
  await page.locator('#profile-form button[type=submit]').click();
  const problem = page.locator('#profile-form .field-problem');
  await problem.waitFor();
  assert.equal(await website.getAttribute('aria-invalid'), 'true');
  assert.ok(((await website.getAttribute('aria-describedby')) ?? '').split(' ').includes((await problem.getAttribute('id'))!));
  assert.equal(await page.locator('#notice').isVisible(), false, 'no message over the form');
});

test('the portal preview of a new key says in words what it may do, with no route in it', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { env: ENV });
  const user = await signedInUser(server, { role: 'creator' });
  const { page, problems } = await signedInPage(t, server, user);

  // Every preset ticked: scopes and routes together.
  await page.locator('#create-key-form').waitFor();
  for (const box of await page.locator('#create-key-form input[data-preset]').all()) await box.check();
  const preview = page.locator('#create-key-form .permission-preview');
  await preview.locator('li').nth(5).waitFor();
  const text = await preview.innerText();
  assert.match(text, /read your profile/i);
  assert.match(text, /change your profile/i);
  assert.match(text, /usage/i);
  assert.doesNotMatch(text, /\/v1\/|\b(GET|PUT|POST|PATCH|DELETE)\b/, 'no route in the preview');
  // The presets themselves read in words too.
  assert.doesNotMatch(await page.locator('#create-key-form fieldset.presets').innerText(), /\/v1\//);
  assert.deepEqual(problems(), []);
});
