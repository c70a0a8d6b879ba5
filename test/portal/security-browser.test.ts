// The portal's Security page and two-factor setup in headless Chromium at 390 and 1280 px against
// a real server (contract section 23, "a security page people act on"):
// - the sessions listed with this device marked; *Sign out* on another device and *Sign out every
//   other session* end them (their cookies then get 401) while this one goes on;
// - two-factor setup: the QR code the page draws is read back from its SVG by a reader written
//   apart from the page's encoder, the otpauth:// address it holds gives the secret shown in
//   groups of four, and a code made from it (by the otpauth package) turns sign-in on and later
//   signs in; the recovery codes downloaded as a .txt are the ones shown, and one signs in;
//   *Make new codes* (password and a code) replaces them;
// - axe finds nothing serious or critical on each of these screens; nothing scrolls sideways.
// Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test, type TestContext } from 'node:test';
import * as OTPAuth from 'otpauth';
import { ManualClock } from '../../src/clock.ts';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm, waitForCount } from '../dashboard/browser.ts';
import { portalPageWithAxe, seriousFindings } from '../helpers/axe.ts';
import { signedInUser, signIn, sameOrigin, type PortalUser } from '../helpers/portal.ts';
import { decodeQr } from '../helpers/qr-decode.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { codeAt, passwordStep } from '../helpers/two-factor.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const WIDTHS = [390, 1280] as const;
const browserFor = sharedChromium(search);
/** One TOTP step. */
const STEP_MS = 30_000;

/** A page `width` px wide with axe loaded, signed in as `user` through the portal's own form. */
async function signedInPage(t: TestContext, server: TestServer, user: PortalUser, width: number): Promise<{ page: Page; problems: () => string[] }> {
  const { page, problems } = await portalPageWithAxe(t, await browserFor(t), `${server.url}/portal`, width, { context: { acceptDownloads: true }, defaultTimeoutMs: 20_000 });
  await signInThroughForm(page, user);
  return { page, problems };
}

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  assert.ok(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), `${what}: no sideways scrolling`);
}

const meWith = (server: TestServer, cookie: string) => server.request('GET', '/portal/v1/me', { headers: { cookie } });

test('Security page: the sessions with this device marked; sign out one device, then every other; their cookies get 401', { skip, timeout: 240_000 }, async (t) => {
  const server = await startServer(t);
  for (const width of WIDTHS) {
    const user = await signedInUser(server);
    // Two more devices, signed in from elsewhere (this test's own HTTP client).
    const phone = await signIn(server, user.email, user.password);
    const laptop = await signIn(server, user.email, user.password);
    const { page, problems } = await signedInPage(t, server, user, width);
    await page.locator('.tab[data-page=security]').click();
    const cards = page.locator('.session-card');
    // The invitation's session, the two above and this browser's.
    await waitForCount(page, '.session-card', 4);
    const current = page.locator('.session-card.this-device');
    assert.equal(await current.count(), 1, 'exactly one session is this device');
    assert.match(await current.innerText(), /This device/);
    assert.match(await current.innerText(), /Chrome on Linux/);
    assert.match(await current.innerText(), /127\.0\.0\.1/);
    assert.equal(await current.getByRole('button', { name: /^Sign out/ }).count(), 0, 'this device is signed out with Sign out at the top, not here');
    assert.deepEqual(await seriousFindings(page, `${width} px security`), []);
    await noSidewaysScroll(page, `${width} px security`);

    // Sign out one other device: the newest other session (the laptop), listed right after this one.
    const sessions = (await server.request('GET', '/portal/v1/sessions', { headers: laptop.headers })).body.data as Array<{ id: string; current: boolean }>;
    const laptopId = sessions.find((session) => session.current)!.id;
    await page.locator(`.session-card[data-session-id="${laptopId}"]`).getByRole('button', { name: /^Sign out/ }).click();
    assert.deepEqual(await seriousFindings(page, `${width} px sign out one (dialog)`), []);
    await page.locator('dialog').getByRole('button', { name: 'Sign it out' }).click();
    await page.locator(`.session-card[data-session-id="${laptopId}"]`).waitFor({ state: 'detached' });
    assert.equal((await meWith(server, laptop.cookie)).status, 401, 'the signed-out device is refused');
    assert.equal((await meWith(server, phone.cookie)).status, 200, 'the other devices go on');
    assert.equal(await cards.count(), 3);

    // Sign out every other session: only this device is left, and it still works.
    await page.locator('#end-other-sessions').click();
    await page.locator('dialog').getByRole('button', { name: 'Sign out the others' }).click();
    await page.locator('#notice', { hasText: '2 other sessions are signed out' }).waitFor();
    await waitForCount(page, '.session-card', 1);
    assert.equal((await meWith(server, phone.cookie)).status, 401, "the other devices' cookies get 401");
    assert.equal((await meWith(server, user.cookie)).status, 401, "the invitation's session too");
    assert.equal(await page.locator('#end-other-sessions').isHidden(), true, 'nothing left to sign out');
    // The activity below says so, and this page still works (its next request is answered).
    await page.locator('.activity li', { hasText: 'Every other session signed out' }).waitFor();
    await page.locator('.activity li', { hasText: 'A session signed out' }).first().waitFor();
    await page.locator('.tab[data-page=keys]').click();
    await page.locator('#keys-title').waitFor();
    assert.deepEqual(problems(), []);
  }
});

/** The modules of the QR code drawn on the page, read back from its SVG's dark rectangles. */
async function matrixOfQr(page: Page, selector: string): Promise<boolean[][]> {
  return page.locator(selector).evaluate((svg) => {
    const quiet = 4;
    const extent = Number(svg.getAttribute('viewBox')!.split(' ')[2]);
    const size = extent - quiet * 2;
    const matrix = Array.from({ length: size }, () => new Array<boolean>(size).fill(false));
    for (const rect of svg.querySelectorAll('rect.qr-dark')) {
      const x = Number(rect.getAttribute('x')) - quiet;
      const y = Number(rect.getAttribute('y')) - quiet;
      for (let offset = 0; offset < Number(rect.getAttribute('width')); offset += 1) matrix[y]![x + offset] = true;
    }
    return matrix;
  });
}

test('two-factor setup: the QR code read back gives the secret, a code from it turns sign-in on and signs in; recovery codes downloaded and made anew', { skip, timeout: 240_000 }, async (t) => {
  // The server's clock moves one 30-second step between codes (each step's code works once).
  const clock = new ManualClock(Date.now());
  const server = await startServer(t, { clock });
  for (const width of WIDTHS) {
    const user = await signedInUser(server);
    const { page, problems } = await signedInPage(t, server, user, width);
    await page.locator('.tab[data-page=profile]').click();
    await page.locator('#two-factor-enrol-form').getByLabel('Current password').fill(user.password);
    await page.locator('#two-factor-enrol-button').click();
    await page.locator('#two-factor-qr').waitFor();

    // The QR code, read from the page's SVG: an otpauth:// address for this account.
    const decoded = decodeQr(await matrixOfQr(page, '#two-factor-qr'));
    assert.equal(decoded.level, 'M');
    const totp = OTPAuth.URI.parse(decoded.text) as OTPAuth.TOTP;
    assert.equal(totp.label, user.email);
    const secret = totp.secret.base32;
    const grouped = await page.locator('#two-factor-secret').inputValue();
    assert.match(grouped, /^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/, 'the secret in groups of four');
    assert.equal(grouped.replaceAll(' ', ''), secret, 'the text is the secret the QR code holds');
    assert.equal(await page.locator('#two-factor-uri').inputValue(), decoded.text);
    assert.deepEqual(await seriousFindings(page, `${width} px two-factor setup`), []);
    await noSidewaysScroll(page, `${width} px two-factor setup`);
    // Copy: what the clipboard gets is the secret itself (no spaces).
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.locator('#two-factor-secret-copy').click();
    await page.locator('#two-factor-confirm-form .copy-status', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);

    // A code made from the scanned secret turns it on.
    await page.locator('#two-factor-code').fill(codeAt(secret, clock.now()));
    await page.locator('#two-factor-confirm-button').click();
    await page.locator('#recovery-codes li').first().waitFor();
    const shown = (await page.locator('#recovery-codes li').allInnerTexts()).map((text) => text.trim());
    assert.equal(shown.length, 10);
    assert.deepEqual(await seriousFindings(page, `${width} px recovery codes`), []);
    await noSidewaysScroll(page, `${width} px recovery codes`);

    // Download (.txt): the file holds exactly the codes shown, one a line, and names the account.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#recovery-codes-download').click()]);
    assert.equal(download.suggestedFilename(), 'marketplace-recovery-codes.txt');
    const file = await readFile((await download.path())!, 'utf8');
    assert.match(file.split('\n')[0]!, new RegExp(`recovery codes for ${user.email.replace(/[.]/g, '\\.')}`));
    assert.deepEqual(file.split('\n').filter((line) => shown.includes(line)), shown, 'every code shown, in order');
    await page.locator('#recovery-codes-copy').click();
    await page.locator('.recovery-actions .copy-status', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), shown.join('\n'));
    await page.locator('#recovery-codes-hide').click();
    await page.locator('#two-factor-state', { hasText: '10 unused recovery codes left' }).waitFor();

    // Make new codes, with the password and a code of the next step (the last one is spent).
    clock.advance(STEP_MS);
    await page.locator('.new-codes summary').click();
    assert.deepEqual(await seriousFindings(page, `${width} px two-factor on, new codes form`), []);
    await page.locator('#new-codes-form').getByLabel('Current password').fill(user.password);
    await page.locator('#new-codes-form').getByLabel('Code from the app').fill(codeAt(secret, clock.now()));
    await page.locator('#new-codes-button').click();
    await page.locator('#notice', { hasText: 'New recovery codes made' }).waitFor();
    const renewed = (await page.locator('#recovery-codes li').allInnerTexts()).map((text) => text.trim());
    assert.equal(renewed.length, 10);
    assert.equal(renewed.filter((code) => shown.includes(code)).length, 0, 'all new');
    const [second] = await Promise.all([page.waitForEvent('download'), page.locator('#recovery-codes-download').click()]);
    const secondFile = await readFile((await second.path())!, 'utf8');
    assert.deepEqual(secondFile.split('\n').filter((line) => renewed.includes(line)), renewed);

    // Sign-in: an old code no longer works, a downloaded new one does; then a code from the QR's secret signs in.
    const oldTicket = await passwordStep(server, user.email, user.password);
    assert.equal((await server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body: { ticket: oldTicket, recovery_code: shown[0] } })).status, 401);
    const newTicket = await passwordStep(server, user.email, user.password);
    assert.equal((await server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body: { ticket: newTicket, recovery_code: renewed[0] } })).status, 201);
    await page.locator('#sign-out').click();
    await page.locator('#sign-in-form input[name=email]').fill(user.email);
    await page.locator('#sign-in-form input[type=password]').fill(user.password);
    await page.locator('#sign-in-button').click();
    clock.advance(STEP_MS);
    await page.locator('#second-factor-form').getByLabel('Code', { exact: true }).fill(codeAt(secret, clock.now()));
    await page.locator('#second-factor-button').click();
    await page.locator('#keys-title').waitFor();
    assert.deepEqual(problems(), []);
  }
});
