// The portal's profile page in headless Chromium against a real server, at 390 px: a new
// password is typed twice and a mismatch is marked under the repeat field with nothing sent;
// the sign-in email is changed from the page with the current password (a wrong one marked under
// its field), after which the new email signs in. Skipped, with the reason, only when no
// Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findChromium, sharedChromium, signInThroughForm } from '../dashboard/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

test('the profile changes the sign-in email with the password, and asks for a new password twice (390 px)', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const browser = await browserFor(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${server.url}/portal`);
  await signInThroughForm(page, user);
  await page.getByRole('button', { name: 'Profile' }).click();
  assert.doesNotMatch(await page.locator('.portal-profile').innerText(), /Ask the operator to change your email/);

  // A new password typed differently the second time is not sent.
  const passwordForm = page.locator('#password-form');
  await passwordForm.locator('input[name=current-password]').fill(user.password);
  await passwordForm.locator('input[name=new-password]').fill('a brand new passphrase 1');
  await passwordForm.locator('input[name=repeat-password]').fill('a brand new passphrase 2');
  await passwordForm.getByRole('button', { name: 'Change password' }).click();
  const repeat = passwordForm.locator('input[name=repeat-password]');
  await eventually(async () => (await repeat.getAttribute('aria-invalid')) === 'true', 10_000, 'the repeat field marked');
  assert.match(await passwordForm.innerText(), /Does not match the new password\./);
  const signIn = await server.request('POST', '/portal/v1/session', { headers: { origin: server.url }, body: { email: user.email, password: user.password } });
  assert.equal(signIn.status, 201, 'the old password still works: nothing was sent');

  // The email: a wrong password is marked under its field; the right one changes it.
  const emailForm = page.locator('#email-form');
  await emailForm.locator('input[name=email]').fill('moved@example.com');
  await emailForm.locator('input[name=email-current-password]').fill('not the password at all');
  await emailForm.getByRole('button', { name: 'Change email' }).click();
  const emailPassword = emailForm.locator('input[name=email-current-password]');
  await eventually(async () => (await emailPassword.getAttribute('aria-invalid')) === 'true', 10_000, 'the wrong password marked');
  await emailPassword.fill(user.password);
  await emailForm.getByRole('button', { name: 'Change email' }).click();
  await eventually(async () => /Email changed/.test(await page.locator('#notice').innerText()), 10_000, 'the change confirmed');
  const movedSignIn = await server.request('POST', '/portal/v1/session', { headers: { origin: server.url }, body: { email: 'moved@example.com', password: user.password } });
  assert.equal(movedSignIn.status, 201, movedSignIn.text);
});
