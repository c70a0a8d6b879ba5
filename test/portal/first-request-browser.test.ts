// The portal's keys page, third pass (contract section 23), in headless Chromium at 390 and
// 1280 px against a real server: a key made with only "My profile" comes with a curl line for
// GET /v1/users/me, which this test runs as shown, in a shell with the real curl, and gets 200
// with the user's profile; an expired key's card offers neither Roll nor Plan (the server refuses
// both with 409 too). Skipped, with the reason, when no Chromium (or no curl) is found.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { findChromium, sharedChromium, signInThroughForm } from '../dashboard/browser.ts';
import { portalPageWithAxe, seriousFindings } from '../helpers/axe.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const curlFound = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = !search.found ? search.reason : curlFound ? false : 'curl is not installed';
const browserFor = sharedChromium(search);

test('a profile-only key: its curl line calls GET /v1/users/me and, run as shown, answers 200; an expired key offers neither Roll nor Plan', { skip, timeout: 240_000 }, async (t) => {
  const server = await startServer(t);
  for (const width of [390, 1280]) {
    const user = await signedInUser(server);
    const expiring = await server.request('POST', '/portal/v1/keys', { headers: user.headers, body: { name: 'short-lived', expires_at: new Date(Date.now() + 500).toISOString() } });
    assert.equal(expiring.status, 201, expiring.text);
    const { page, problems } = await portalPageWithAxe(t, await browserFor(t), `${server.url}/portal`, width, { defaultTimeoutMs: 20_000 });
    await signInThroughForm(page, user);

    // Only "My profile": the least a profile tool needs.
    await page.locator('details.create-key summary').click();
    await page.locator('#create-key-form input[data-preset=browse]').uncheck();
    await page.locator('#create-key-form input[data-preset=profile]').check();
    await page.getByLabel('Name (optional)').fill('profile tool');
    await page.locator('#create-key-button').click();
    const secret = await page.locator('#new-key-secret').inputValue();
    const snippet = page.locator('.first-request');
    await snippet.waitFor();
    const curl = (await snippet.locator('pre code').first().innerText()).trim();
    assert.equal(curl, `curl -H 'Authorization: Bearer ${secret}' ${server.url}/v1/users/me`);
    assert.match(await snippet.innerText(), /Calls GET \/v1\/users\/me, which this key may read/);
    assert.deepEqual(await seriousFindings(page, `${width} px new key with its first request`), []);
    // Run as shown, in a shell (not synchronously: the server answering it runs in this process).
    const { stdout: output } = await promisify(execFile)('sh', ['-c', `${curl} --silent --show-error --max-time 60 --write-out '\\n%{http_code}'`], { encoding: 'utf8' });
    const [body, status] = [output.slice(0, output.lastIndexOf('\n')), output.slice(output.lastIndexOf('\n') + 1)];
    assert.equal(status, '200', body);
    assert.equal(JSON.parse(body).data.id, user.userId);
    const fetchLine = (await snippet.locator('pre code').nth(1).innerText()).trim();
    assert.equal(fetchLine, `await fetch('${server.url}/v1/users/me', { headers: { Authorization: 'Bearer ${secret}' } }).then((answer) => answer.json())`);
    await page.locator('#new-key-secret-hide').click();

    // The expired key: neither Roll nor Plan on its card, and the server refuses both.
    await eventually(async () => Date.now() > Date.parse(expiring.body.data.expires_at), 5_000, 'the key expires');
    await page.locator('.tab[data-page=webhooks]').click();
    await page.locator('.tab[data-page=keys]').click();
    const card = page.locator(`[data-key-id="${expiring.body.data.id}"]`);
    await card.locator('.badge', { hasText: 'expired' }).waitFor();
    assert.equal(await card.getByRole('button', { name: 'Roll' }).count(), 0, 'no Roll');
    assert.equal(await card.getByRole('button', { name: 'Plan' }).count(), 0, 'no Plan');
    assert.equal(await card.getByRole('button', { name: 'Revoke' }).count(), 1, 'it can still be revoked');
    assert.equal((await server.request('POST', `/portal/v1/keys/${expiring.body.data.id}/roll`, { headers: user.headers, body: { grace_seconds: 0 } })).status, 409);
    assert.equal((await server.request('PATCH', `/portal/v1/keys/${expiring.body.data.id}`, { headers: user.headers, body: { plan: 'pro' } })).status, 409);
    assert.deepEqual(problems(), []);
  }
});
