// CSRF in a real browser: a user signed in to the portal (cookie set by the portal's own page)
// visits a page on another origin whose script tries every portal write a page can send with
// the user's cookie: fetch with credentials (text/plain and JSON), a sign-out, and a top-level
// auto-submitted form (text/plain, shaped as JSON). None may change anything: the session lives on,
// no key is made, the profile is as it was. Skipped only when no Chromium is found.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { findChromium, launchChromium, watchPages } from '../dashboard/browser.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();

/** The attacker's page: its script sends every write, then says so in its title. */
function attackerPage(portal: string): string {
  return `<!doctype html><html><body>
<form id="form" method="POST" action="${portal}/portal/v1/keys" enctype="text/plain">
  <input name='{"name":"evil-form","x":"' value='"}'>
</form>
<script>
(async () => {
  const attempts = [
    fetch('${portal}/portal/v1/keys', { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"name":"evil-fetch"}' }),
    fetch('${portal}/portal/v1/keys', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"name":"evil-json"}' }),
    fetch('${portal}/portal/v1/me', { method: 'PUT', credentials: 'include', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"name":"Mallory"}' }),
    fetch('${portal}/portal/v1/session', { method: 'DELETE', credentials: 'include', mode: 'no-cors' }),
  ];
  await Promise.allSettled(attempts);
  // Last, a top-level form post: the one cross-site request a browser may still send a cookie
  // without a SameSite attribute with (Chromium's "Lax, but POST within 2 minutes").
  document.getElementById('form').submit();
})();
</script></body></html>`;
}

test('a page on another origin cannot make any portal write with the signed-in user\'s cookie (Chromium)', { skip: search.found ? false : search.reason, timeout: 120_000 }, async (t) => {
  if (!search.found) return;
  const server = await startServer(t);
  const ada = await signedInUser(server, { name: 'Ada', role: 'creator' });

  // The other origin: another host name for the same machine, so another site to the browser.
  const port = new URL(server.url).port;
  const portal = `http://127.0.0.1:${port}`;
  const attacker: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(attackerPage(portal));
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => attacker.close(() => resolve())));
  const attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;

  const browser = await launchChromium(search.path);
  t.after(() => browser.close());
  const context = await browser.newContext();
  // The attacker's requests fail in its own console (CORS, refused writes); the portal must not err.
  const watch = await watchPages(context, [/CORS|Failed to load resource|net::ERR_FAILED|status of 40[13]/]);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  // Signed in the way a user is: the portal's own page and form, which set the cookie.
  await page.goto(`${portal}/portal`);
  await page.getByLabel('Email').fill(ada.email);
  await page.getByLabel('Password').fill(ada.password);
  await page.locator('#sign-in-button').click();
  await page.locator('#keys-title').waitFor();
  const [cookie] = await context.cookies(portal);
  assert.ok(cookie, 'the portal set its session cookie');
  const session = { cookie: `${cookie.name}=${cookie.value}` };

  const evil = await context.newPage();
  await evil.goto(attackerUrl);
  // The form's post takes the page to the portal's answer: every attempt has been sent.
  await evil.waitForURL(`${portal}/portal/v1/keys`, { timeout: 30_000 });
  assert.match((await evil.textContent('body')) ?? '', /"error"/, 'the form post was refused');

  const me = await server.request('GET', '/portal/v1/me', { headers: session });
  assert.equal(me.status, 200, 'the session survived the cross-origin sign-out');
  assert.equal(me.body.data.name, 'Ada', 'the profile is unchanged');
  const keys = await server.request('GET', '/portal/v1/keys', { headers: session });
  assert.equal(keys.status, 200);
  assert.deepEqual(keys.body.data, [], 'no key was made by the other origin');
  // The portal's page itself still works with that session.
  await page.reload();
  await page.locator('#keys-title').waitFor();
  assert.deepEqual(watch.problems().filter((problem) => !problem.includes('localhost')), []);
});
