// The portal's webhooks page in headless Chromium against a real server and a real local
// receiver (WEBHOOK_ALLOW_PRIVATE=1), at 390 and 1280 px: the last delivery line follows the
// deliveries as they happen; edit (a refused URL marked under its field, then saved: the next
// event goes to the new URL); pause (the event is not sent and shows as skipped) and resume;
// recover since a time (a too-old time marked under its field; then the skipped and the failed
// events are sent again with their own webhook-id); rotate the secret (shown once, with a copy
// button: the next delivery carries two v1 signatures, each verifying with its own secret).
// A webhook switched off by its receiver's 410 says why and is resumed with its secret.
// Nothing scrolls sideways, and axe finds nothing serious or critical on any of these screens.
// Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { loadAxe, seriousFindings, sidewaysScroll } from '../helpers/axe.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, waitFor, type ReceivedRequest } from '../webhooks/fixtures.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);
/** Local receivers allowed; a failed attempt retried only an hour later, so what recovery sends is its own. */
const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };
/** Bounds how long a broken step takes to fail; a working one needs a fraction of it. */
const STEP_TIMEOUT_MS = 30_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** One `v1,<signature>` checked against `secret` by the Standard Webhooks rules, written from the specification. */
function signatureVerifies(secret: string, request: ReceivedRequest, signature: string): boolean {
  const [version, encoded] = signature.split(',');
  if (version !== 'v1' || encoded === undefined) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  const given = Buffer.from(encoded, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function signaturesOf(request: ReceivedRequest): string[] {
  return String(request.headers['webhook-signature']).split(' ');
}

/** Makes a listing through the portal's API (its listing.created event goes to the user's webhooks). */
async function createListing(server: TestServer, user: PortalUser, title: string): Promise<void> {
  const made = await server.request('POST', '/portal/v1/listings', { headers: user.headers, body: { title, type: 'TOOL', price: 1 } });
  assert.equal(made.status, 201, made.text);
}

/** Puts `ms` (Unix milliseconds) into the datetime-local control, in the browser's own time zone. */
async function setLocalTime(page: Page, selector: string, ms: number): Promise<void> {
  await page.locator(selector).evaluate((input: any, when: number) => {
    const local = new Date(when - new Date(when).getTimezoneOffset() * 60_000);
    input.value = local.toISOString().slice(0, 16);
  }, ms);
}

for (const width of [390, 1280] as const) {
  test(`the webhooks page edits, pauses, resumes, recovers and rotates against a real receiver, and its last delivery follows (${width} px)`, { skip, timeout: 240_000 }, async (t) => {
    let receiverFails = false;
    const receiver = await startReceiver(t, (_request, response) => {
      response.writeHead(receiverFails ? 500 : 204);
      response.end();
    });
    const server = await startServer(t, { dataDir: null, env: ENV });
    const user = await signedInUser(server, { role: 'creator' });
    const startedAt = Date.now();
    const browser = await browserFor(t);
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    t.after(() => context.close());
    const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/, /status of 400 \(Bad Request\)/]);
    await loadAxe(context);
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const findings: string[] = [];
    await page.goto(`${server.url}/portal`);
    await signInThroughForm(page, user);
    await page.getByRole('button', { name: 'Webhooks', exact: true }).click();

    // Register: the secret is shown once; the registration ping's outcome reaches the card by itself.
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Register webhook' }).click();
    const firstSecret = await page.locator('#webhook-secret').inputValue();
    assert.match(firstSecret, /^whsec_/);
    await page.locator('#webhook-secret-hide').click();
    const card = page.locator('.webhook-card');
    await card.locator('.last-delivery[data-state="delivered"]').waitFor();
    assert.match(await card.locator('.last-delivery').innerText(), /delivered · HTTP 204 · ping/);
    const webhookId = (await card.getAttribute('data-webhook-id'))!;

    // Edit: a URL the server refuses is marked under its field; then a new URL and a description are saved.
    await card.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.locator('dialog');
    await dialog.locator('#dialog-webhook-url').fill('ftp://example.com/hook');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#dialog-webhook-url[aria-invalid="true"]').waitFor();
    assert.match(await dialog.locator('.field-problem').first().innerText(), /Endpoint URL/);
    findings.push(...(await seriousFindings(page, `${width} px edit refused`)));
    const editedUrl = receiver.url.replace(/hook$/, 'edited');
    await dialog.locator('#dialog-webhook-url').fill(editedUrl);
    await dialog.getByLabel('Description (optional)').fill('Catalog sync');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    await card.locator('h3', { hasText: editedUrl }).waitFor();
    assert.equal(await card.locator('.webhook-description').innerText(), 'Catalog sync');
    await createListing(server, user, 'After the edit');
    await waitFor('the event at the new URL', () => receiver.received.some((request) => request.path.endsWith('/edited')));
    const atNewUrl = receiver.received.find((request) => request.path.endsWith('/edited'))!;
    assert.equal(JSON.parse(atNewUrl.body).type, 'listing.created');
    assert.ok(signatureVerifies(firstSecret, atNewUrl, signaturesOf(atNewUrl)[0]!), 'signed with the secret shown at registration');
    await card.locator('.last-delivery[data-state="delivered"]', { hasText: 'listing.created' }).waitFor();

    // Pause: the next event is not sent; it shows as skipped.
    await card.getByRole('button', { name: 'Pause' }).click();
    await card.locator('.badge', { hasText: 'paused' }).waitFor();
    await card.locator('.disabled-reason[data-reason="paused"]').waitFor();
    const sentBeforePause = receiver.received.length;
    await createListing(server, user, 'While paused');
    await card.getByRole('button', { name: 'Deliveries' }).click();
    const skipped = card.locator('.deliveries li[data-state="skipped"]');
    await skipped.waitFor();
    const skippedEventId = (await skipped.getAttribute('data-event-id'))!;
    assert.match(await skipped.innerText(), /skipped/);
    findings.push(...(await seriousFindings(page, `${width} px paused, deliveries open`)));

    // Resume; an event fails at the receiver: the last delivery line turns to retrying by itself.
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.locator('.badge', { hasText: 'active' }).waitFor();
    receiverFails = true;
    await createListing(server, user, 'Fails at first');
    await card.locator('.last-delivery[data-state="retrying"]').waitFor();
    assert.match(await card.locator('.last-delivery').innerText(), /retrying · HTTP 500 · listing\.created/);
    const failed = receiver.received[receiver.received.length - 1]!;
    assert.equal(receiver.received.length, sentBeforePause + 1, 'nothing was sent for the event made while paused');
    assert.ok(!receiver.received.some((request) => request.headers['webhook-id'] === skippedEventId));
    receiverFails = false;

    // Recover: a time older than the kept events is marked under "Since"; from the test's start, the skipped and the failed event are sent again.
    await card.getByRole('button', { name: 'Recover failed…' }).click();
    await setLocalTime(page, '#dialog-since', Date.now() - 40 * DAY_MS);
    await dialog.getByRole('button', { name: 'Send them again' }).click();
    await page.locator('#dialog-since[aria-invalid="true"]').waitFor();
    findings.push(...(await seriousFindings(page, `${width} px recover refused`)));
    await setLocalTime(page, '#dialog-since', startedAt - 60_000);
    const sentBeforeRecovery = receiver.received.length;
    await dialog.getByRole('button', { name: 'Send them again' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('#notice', { hasText: '2 events are on their way again' }).waitFor();
    await waitFor('the two recovered events', () => receiver.received.length >= sentBeforeRecovery + 2);
    const recovered = receiver.received.slice(sentBeforeRecovery);
    assert.deepEqual(
      recovered.map((request) => request.headers['webhook-id']),
      [skippedEventId, failed.headers['webhook-id']],
      'the skipped event, then the failed one with the webhook-id it first had, oldest first',
    );
    assert.equal(recovered[1]!.body, failed.body, 'the same body byte for byte');

    // Rotate with an hour's grace: the new secret shown once, with a copy button; two signatures on the next delivery.
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('#dialog-grace').selectOption('3600');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const newSecret = await page.locator('#webhook-secret').inputValue();
    assert.match(newSecret, /^whsec_/);
    assert.notEqual(newSecret, firstSecret);
    assert.match(await page.locator('.secret-reveal').innerText(), /two signatures/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.locator('.copy-status', { hasText: /Copied|Could not copy/ }).waitFor();
    findings.push(...(await seriousFindings(page, `${width} px new secret shown`)));
    const sentBeforeRotation = receiver.received.length;
    await createListing(server, user, 'After the rotation');
    await waitFor('the delivery after the rotation', () => receiver.received.length > sentBeforeRotation);
    const rotatedDelivery = receiver.received[sentBeforeRotation]!;
    const signatures = signaturesOf(rotatedDelivery);
    assert.equal(signatures.length, 2, signatures.join(' '));
    assert.ok(signatures.every((signature) => signature.startsWith('v1,')));
    assert.ok(signatureVerifies(newSecret, rotatedDelivery, signatures[0]!), 'the first verifies with the new secret');
    assert.ok(signatureVerifies(firstSecret, rotatedDelivery, signatures[1]!), 'the second verifies with the old secret');
    assert.ok(!signatureVerifies(firstSecret, rotatedDelivery, signatures[0]!));
    await page.locator('#webhook-secret-hide').click();
    await page.locator(`.webhook-card[data-webhook-id="${webhookId}"] h3:focus`).waitFor();

    assert.ok((await sidewaysScroll(page)) <= 1, `nothing scrolls sideways at ${width} px`);
    findings.push(...(await seriousFindings(page, `${width} px webhooks`)));
    assert.deepEqual(findings, []);
    assert.deepEqual(watch.problems(), [], 'no script errors and no Content-Security-Policy violations');
  });
}

test('a webhook switched off by its receiver\'s 410 says so, and Resume turns it back on with the same secret (390 px)', { skip, timeout: 120_000 }, async (t) => {
  let gone = true;
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(gone ? 410 : 204);
    response.end();
  });
  const server = await startServer(t, { dataDir: null, env: ENV });
  const user = await signedInUser(server, { role: 'creator' });
  const registered = await server.request('POST', '/portal/v1/webhooks', { headers: user.headers, body: { url: receiver.url, events: ['listing.created', 'ping'] } });
  assert.equal(registered.status, 201, registered.text);
  const { id: webhookId, secret } = registered.body.data as { id: string; secret: string };
  await eventually(async () => (await server.request('GET', '/portal/v1/webhooks', { headers: user.headers })).body.data[0]?.disabled_reason === 'gone', STEP_TIMEOUT_MS, 'switched off by the 410');

  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  t.after(() => context.close());
  const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
  await loadAxe(context);
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  await page.goto(`${server.url}/portal`);
  await signInThroughForm(page, user);
  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  const card = page.locator(`.webhook-card[data-webhook-id="${webhookId}"]`);
  await card.locator('.badge', { hasText: 'switched off' }).waitFor();
  assert.match(await card.locator('.disabled-reason[data-reason="gone"]').innerText(), /410 Gone/);
  assert.equal(await card.getByRole('button', { name: 'Recover failed…' }).count(), 0, 'resumed first, then recovered');
  const findings = await seriousFindings(page, '390 px switched off');

  gone = false;
  await card.getByRole('button', { name: 'Resume' }).click();
  await card.locator('.badge', { hasText: 'active' }).waitFor();
  const sentBefore = receiver.received.length;
  await createListing(server, user, 'After resuming');
  await waitFor('the event after resuming', () => receiver.received.length > sentBefore);
  const delivered = receiver.received[sentBefore]!;
  assert.ok(signatureVerifies(secret, delivered, signaturesOf(delivered)[0]!), 'the same secret signs after resuming');
  await card.locator('.last-delivery[data-state="delivered"]', { hasText: 'listing.created' }).waitFor();
  assert.ok((await sidewaysScroll(page)) <= 1, 'nothing scrolls sideways at 390 px');
  assert.deepEqual(findings, []);
  assert.deepEqual(watch.problems(), []);
});
