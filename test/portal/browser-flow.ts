// The developer portal end to end in headless Chromium, as a developer and the operator use it:
// invitation link → set password → create a key (read:listings by default) → call /v1 with it →
// roll with a 60 s grace (old and new both work, then only the new) → plan switch changes
// X-RateLimit-Limit at once → plan request approved in the operator dashboard → webhook test
// ping received and its signature verified → revoke (401 from the next request) → sign out.
// Run against one server (e2e.test.ts) and three instances behind nginx (e2e-cluster.test.ts),
// where each request may reach any instance. Not a test file itself.

import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { watchPages } from '../dashboard/browser.ts';
import { startReceiver } from '../webhooks/fixtures.ts';

/** How long the old secret of the rolled key stays accepted. */
const GRACE_SECONDS = 60;
/** Bounds how long a broken step takes to fail; a working one needs a fraction of it. */
const STEP_TIMEOUT_MS = 20_000;

export interface FlowTarget {
  /** Where the browser and the API calls go (a server, or nginx in front of instances). */
  base: string;
  adminToken: string;
}

interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

const withKey = (target: FlowTarget, key: string) => call(target.base, 'GET', '/v1/listings', { authorization: `Bearer ${key}` });
const asOperator = (target: FlowTarget, method: string, path: string, body?: unknown) => call(target.base, method, path, { authorization: `Bearer ${target.adminToken}` }, body);

/** Polls `check` until it returns true; fails naming `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = STEP_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(performance.now() < deadline, `${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A Standard Webhooks signature check written from the specification, not the server's code. */
function signatureIsValid(secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function secretShown(page: Page, selector: string): Promise<string> {
  await page.locator(selector).waitFor();
  return page.locator(selector).inputValue();
}

export async function runPortalFlow(t: TestContext, browser: Browser, target: FlowTarget): Promise<void> {
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(204);
    response.end();
  });
  const email = `ada-${process.pid}-${Date.now()}@example.com`;
  const password = 'a long portal passphrase 42';
  const made = await asOperator(target, 'POST', '/admin/v1/users', { name: 'Ada Developer', email, role: 'creator' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const invitation = await asOperator(target, 'POST', `/admin/v1/users/${made.body.data.id}/invitations`);
  assert.equal(invitation.status, 201, JSON.stringify(invitation.body));
  assert.match(invitation.body.data.url, /\/portal#invitation=/);

  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  t.after(() => context.close());
  // Loading the page asks who is signed in; before signing in (and after) that is a 401.
  const watch = await watchPages(context, [/status of 401/]);
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);

  // The invitation link opens the set-password form; setting it signs in.
  await page.goto(`${target.base}/portal#invitation=${encodeURIComponent(invitation.body.data.token)}`);
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('Repeat it').fill(password);
  await page.locator('#set-password-button').click();
  await page.locator('#keys-title').waitFor();
  assert.equal(new URL(page.url()).hash, '', 'the used invitation is taken out of the address');

  // A new key starts at read:listings; its secret is shown once and works on /v1.
  await page.getByLabel('Name (optional)').fill('Storefront');
  await page.locator('#create-key-button').click();
  const firstSecret = await secretShown(page, '#new-key-secret');
  const card = page.locator('.key-card', { hasText: 'Storefront' });
  await card.waitFor();
  assert.match((await card.locator('.entries').textContent()) ?? '', /^read:listings$/);
  assert.equal((await withKey(target, firstSecret)).status, 200);
  await page.locator('#new-key-secret-hide').click();

  // Roll with a 60 s grace: the old and the new secret both work, then only the new.
  await card.getByRole('button', { name: 'Roll' }).click();
  await page.locator('#dialog-grace').selectOption(String(GRACE_SECONDS));
  await page.locator('dialog').getByRole('button', { name: 'Roll key' }).click();
  const rolledAt = Date.now();
  const secondSecret = await secretShown(page, '#new-key-secret');
  assert.notEqual(secondSecret, firstSecret);
  assert.match((await page.locator('.secret-reveal').textContent()) ?? '', /old secret keeps working until/);
  assert.equal((await withKey(target, secondSecret)).status, 200, 'the new secret works at once');
  assert.equal((await withKey(target, firstSecret)).status, 200, 'the old secret still works during the grace');
  await page.locator('#new-key-secret-hide').click();

  // A self-service plan applies from the next request.
  assert.equal((await withKey(target, secondSecret)).headers.get('x-ratelimit-limit'), '100');
  await card.getByRole('button', { name: 'Plan' }).click();
  await page.locator('#dialog-plan').selectOption('pro');
  await page.locator('dialog').getByRole('button', { name: 'Choose plan' }).click();
  await page.locator('#notice', { hasText: 'now on Pro' }).waitFor();
  assert.equal((await withKey(target, secondSecret)).headers.get('x-ratelimit-limit'), '1000');

  // A plan on request: asked in the portal, approved in the operator dashboard.
  await card.getByRole('button', { name: 'Plan' }).click();
  await page.locator('#dialog-plan').selectOption('business');
  await page.locator('dialog').getByRole('button', { name: 'Choose plan' }).click();
  await page.locator('#notice', { hasText: 'the operator will decide' }).waitFor();
  const pending = await asOperator(target, 'GET', '/admin/v1/plan-requests?status=pending');
  const requestId: string = pending.body.data.find((request: { user_id: string }) => request.user_id === made.body.data.id).id;
  const operatorPage = await context.newPage();
  operatorPage.setDefaultTimeout(STEP_TIMEOUT_MS);
  await operatorPage.goto(`${target.base}/dashboard`);
  await operatorPage.locator('#token').fill(target.adminToken);
  await operatorPage.locator('#sign-in-button').click();
  await operatorPage.locator('button.tab[data-page="plans"]').click();
  await operatorPage.locator(`tr[data-request-id="${requestId}"]`).getByRole('button', { name: /^Approve/ }).click();
  await operatorPage.locator('dialog').getByRole('button', { name: 'Approve' }).click();
  await operatorPage.locator(`tr[data-request-id="${requestId}"] .badge.ok`).waitFor();
  assert.equal((await withKey(target, secondSecret)).headers.get('x-ratelimit-limit'), '10000', 'approved: the next request has the new limit');
  await operatorPage.close();

  // A webhook: its secret shown once, a signed test ping, the delivery listed.
  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Register webhook' }).click();
  const webhookSecret = await secretShown(page, '#webhook-secret');
  await until('the registration ping', async () => receiver.received.length >= 1);
  const before = receiver.received.length;
  await page.getByRole('button', { name: 'Send test ping' }).click();
  await until('the test ping', async () => receiver.received.length > before);
  const ping = receiver.received[receiver.received.length - 1]!;
  assert.equal(JSON.parse(ping.body).type, 'ping');
  assert.ok(signatureIsValid(webhookSecret, ping.headers, ping.body), 'the ping verifies with the secret shown once');
  await page.getByRole('button', { name: 'Deliveries' }).click();
  await page.locator('.deliveries li').first().waitFor();

  // The grace ends: the old secret is refused, the new one keeps working.
  await until('the old secret refused once the grace is over', async () => (await withKey(target, firstSecret)).status === 401, (GRACE_SECONDS + 30) * 1000);
  assert.ok(Date.now() - rolledAt >= (GRACE_SECONDS - 2) * 1000, 'not refused before the grace ended');
  assert.equal((await withKey(target, secondSecret)).status, 200);

  // Revoke: refused from the very next request.
  await page.getByRole('button', { name: 'Keys', exact: true }).click();
  await card.getByRole('button', { name: 'Revoke' }).click();
  await page.locator('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await page.locator('.key-card.revoked', { hasText: 'Storefront' }).waitFor();
  assert.equal((await withKey(target, secondSecret)).status, 401);

  // Sign out: the session's cookie no longer opens anything.
  const cookies = await context.cookies(target.base);
  assert.equal(cookies.length, 1);
  assert.equal(cookies[0]!.httpOnly, true);
  assert.equal(cookies[0]!.sameSite, 'Strict');
  await page.locator('#sign-out').click();
  await page.locator('#sign-in-form').waitFor();
  const after = await call(target.base, 'GET', '/portal/v1/me', { cookie: `${cookies[0]!.name}=${cookies[0]!.value}` });
  assert.equal(after.status, 401);
  assert.equal(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1'), true, 'nothing scrolls sideways at 390 px');
  assert.deepEqual(watch.problems(), [], 'no script errors and no Content-Security-Policy violations');
}
