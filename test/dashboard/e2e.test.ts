// The dashboard end to end, in a real headless Chromium against the real server (src/main.ts in
// a child process): sign in, create a user and a key, use the key, watch the usage chart, change
// the plan, revoke, see the API refuse; markup in names stays text; no CSP violation anywhere.
// Skipped, with the reason, only when no Chromium can be found (see browser.ts).

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { findChromium, launchChromium, watchPages } from './browser.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = join(REPO, 'src', 'main.ts');
const ARTIFACTS = join(REPO, 'test', 'artifacts');
const OPERATOR_TOKEN = 'e2e-operator-token-0123456789abcdef';
const SERVER_START_MS = 120_000;
// Each browser step fails within this, so a broken page fails the test well inside its budget;
// it is far above what a step needs on a machine busy with other work (Chromium is slow there).
const STEP_TIMEOUT_MS = 30_000;
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const search = findChromium();

interface RunningServer {
  base: string;
  child: ChildProcess;
  output(): string;
}

/** The real entry point, on a port the OS picks (read back from its "listening on" line), with its own data dir. */
async function startServer(dataDir: string): Promise<RunningServer> {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      MARKETPLACE_ADMIN_TOKEN: OPERATOR_TOKEN,
      MARKETPLACE_DEMO: '0',
      ACCESS_LOG: '0',
      // The test's own webhook receiver listens on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within ${SERVER_START_MS / 1000} s:\n${output}`)), SERVER_START_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (http:\/\/\S+)/.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1]!);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${output}`));
    });
  });
  return { base, child, output: () => output };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A webhook receiver answering 204 to everything, keeping what it got. */
async function startReceiver(): Promise<{ url: string; server: Server; received: Array<{ type: string }> }> {
  const received: Array<{ type: string }> = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      try {
        received.push(JSON.parse(body) as { type: string });
      } catch {
        received.push({ type: 'unreadable' });
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, server, received };
}

/** A request to the public API with a key, as a client program would make it. */
async function callListings(base: string, key: string): Promise<{ status: number; limit: string | null }> {
  const response = await fetch(`${base}/v1/listings`, { headers: { Authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return { status: response.status, limit: response.headers.get('x-ratelimit-limit') };
}

/** The operator API, straight from the test (to check what the page did, and to set up a webhook). */
async function admin<Body>(base: string, method: string, path: string, body?: unknown): Promise<Body> {
  const response = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${OPERATOR_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} /admin/v1${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Body;
}

/** Clicks Refresh in the usage panel and waits for the answer it started (aria-busy goes true, then false). */
async function refreshUsage(page: Page): Promise<void> {
  await page.locator('section.usage').getByRole('button', { name: 'Refresh' }).click();
  await page.locator('section.usage[aria-busy="false"]').waitFor();
}

async function chartTotals(page: Page): Promise<{ requests: number; rateLimited: number; bars: number }> {
  const chart = page.locator('svg.usage-chart');
  return {
    requests: Number(await chart.getAttribute('data-total-requests')),
    rateLimited: Number(await chart.getAttribute('data-total-rate-limited')),
    bars: await chart.locator('.bar').count(),
  };
}

test(
  'the operator dashboard in headless Chromium: users, keys, usage, plan, revoke, webhooks',
  { skip: search.found ? false : search.reason, timeout: 300_000 },
  async (t) => {
    assert.ok(search.found);
    // One after-hook, so the order is certain: browser, then server and receiver, then files.
    const cleanups: Array<() => unknown> = [];
    t.after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    const dataDir = mkdtempSync(join(tmpdir(), 'dashboard-e2e-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    mkdirSync(ARTIFACTS, { recursive: true });
    const server = await startServer(dataDir);
    cleanups.push(() => stopServer(server.child));
    const receiver = await startReceiver();
    cleanups.push(() => new Promise((resolve) => receiver.server.close(resolve)));

    const browser = await launchChromium(search.path);
    cleanups.push(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // A 401 to the wrong token at sign-in is expected; every other red line is a failure.
    const watch = await watchPages(context, [/status of 401/]);
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const requestedUrls: string[] = [];
    const unprotected: string[] = [];
    page.on('request', (request) => requestedUrls.push(request.url()));
    page.on('response', (response) => {
      if (!new URL(response.url()).pathname.startsWith('/dashboard')) return;
      const headers = response.headers();
      const missing = Object.entries(SECURITY_HEADERS).filter(([name, value]) => headers[name] !== value).map(([name]) => name);
      if (!/script-src 'self'/.test(headers['content-security-policy'] ?? '')) missing.push('content-security-policy');
      if (missing.length > 0) unprotected.push(`${response.url()}: ${missing.join(', ')}`);
    });
    const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

    // The page and its headers.
    const response = await page.goto(`${server.base}/dashboard`);
    assert.ok(response);
    assert.equal(response.status(), 200);
    const headers = response.headers();
    assert.match(headers['content-type'] ?? '', /^text\/html/);
    assert.match(headers['content-security-policy'] ?? '', /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['x-frame-options'], 'DENY');

    // Sign in: a wrong token is refused, the right one is kept for this tab only.
    await page.locator('#token').fill('not-the-token-at-all');
    await page.locator('#sign-in-button').click();
    await page.locator('.notice.error').waitFor();
    assert.match((await page.locator('.notice.error').textContent()) ?? '', /refused that token/);
    await page.locator('#token').fill(OPERATOR_TOKEN);
    await page.locator('#sign-in-button').click();
    await page.locator('.users-panel').waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('marketplace.operatorToken')"), OPERATOR_TOKEN);
    assert.equal(await page.evaluate<number>('localStorage.length'), 0);
    assert.equal(await page.evaluate<string>('document.cookie'), '');
    assert.deepEqual(await context.cookies(), []);
    assert.equal(await page.locator('#token').inputValue(), '', 'the token is gone from the form');
    // Another tab of the same browser does not get the token.
    const otherTab = await context.newPage();
    await otherTab.goto(`${server.base}/dashboard`);
    await otherTab.locator('#sign-in').waitFor();
    assert.equal(await otherTab.evaluate<number>('sessionStorage.length'), 0);
    await otherTab.close();

    // A user whose name is markup: it must show as text and never run.
    const hostileName = 'Eve <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await page.getByLabel('Name', { exact: true }).fill(hostileName);
    await page.getByLabel('Email (optional)').fill('eve@example.com');
    await page.locator('.create-user select').selectOption('creator');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.locator('#user-title').waitFor();
    assert.equal(await page.locator('#user-title').textContent(), hostileName);
    assert.equal(await page.getByRole('button', { name: hostileName, exact: true }).count(), 1);
    assert.equal(await page.locator('main script, main img[src="x"], body > img').count(), 0);
    assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined);
    await shot('1-user');

    // Change the role: the badge follows and the server has it.
    await page.locator('.role-form select').selectOption('member');
    await page.getByRole('button', { name: 'Change role' }).click();
    await page.locator('.user-detail .section-head .badge:has-text("member")').waitFor();
    const users = await admin<{ data: Array<{ id: string; name: string; role: string }> }>(server.base, 'GET', '/users');
    const eve = users.data.find((user) => user.name === hostileName);
    assert.ok(eve);
    assert.equal(eve.role, 'member');

    // A key with a tiny custom limit, so a few calls reach it and show as 429s.
    const createKey = page.locator('details.create-key');
    if ((await createKey.getAttribute('open')) === null) await page.locator('details.create-key summary').click();
    await page.getByLabel('Key name (optional)').fill('e2e key');
    // Least privilege by default; custom entries are checked as they are typed.
    assert.ok(await page.getByLabel(/^Read-only browse/).isChecked());
    assert.ok(await page.getByLabel(/^Free/).isChecked());
    const customEntries = page.getByLabel('Custom entries');
    await customEntries.fill('read:cats');
    await page.locator('.entry-check li.bad:has-text("unknown resource")').waitFor();
    await customEntries.fill('');
    await page.locator('.entry-check li').waitFor({ state: 'detached' });
    await page.getByLabel('Custom', { exact: true }).check();
    await page.getByLabel('Custom limit, requests per minute').fill('5');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.locator('#new-key-secret');
    await secret.waitFor();
    const key = await secret.inputValue();
    assert.match(key, /^market_live_[A-Za-z0-9]+$/);
    assert.match((await page.locator('.secret-reveal').textContent()) ?? '', /only time the full key is shown/);
    await shot('2-new-key');
    await page.getByRole('button', { name: /I have stored it/ }).click();
    await secret.waitFor({ state: 'detached' });
    assert.ok(!(await page.evaluate<string>('document.body.textContent')).includes(key), 'the key is gone from the page');
    const row = page.locator('.keys-table tr:has-text("e2e key")');
    assert.match((await row.textContent()) ?? '', /read:listings/);
    assert.match((await row.locator('.tier-name').textContent()) ?? '', /Custom/);

    // Usage before any call: an empty chart.
    await page.getByRole('button', { name: 'Usage of e2e key' }).click();
    await page.locator('section.usage[aria-busy="false"] svg.usage-chart').waitFor();
    assert.deepEqual(await chartTotals(page), { requests: 0, rateLimited: 0, bars: 0 });
    assert.match((await row.textContent()) ?? '', /Used never/);

    // Use the key: five calls pass, the next two are rate-limited.
    const statuses: number[] = [];
    for (let call = 0; call < 7; call += 1) statuses.push((await callListings(server.base, key)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);

    // One refresh shows them: the usage endpoint reads the live counters, not the flushed copy.
    await refreshUsage(page);
    assert.deepEqual(await chartTotals(page), { requests: 7, rateLimited: 2, bars: 1 });
    assert.equal(await page.locator('svg.usage-chart .limit-mark').count(), 1, 'the 429s are marked');
    assert.equal(await page.locator('svg.usage-chart .bar.limited .bar-limited').count(), 1);
    const listingsRow = page.locator('.endpoints-table tr:has-text("/v1/listings")');
    // Endpoint, requests, 2xx, 3xx, 4xx, 5xx, 429: the refused calls count against the route asked for.
    assert.deepEqual(await listingsRow.locator('td').allTextContents(), ['GET /v1/listings', '7', '5', '0', '2', '0', '2']);
    assert.equal(await page.locator('.endpoints-table tbody tr').count(), 1);
    assert.match((await page.locator('.usage-summary').textContent()) ?? '', /0 of 5 left/);
    assert.match((await row.textContent()) ?? '', /Used just now/, 'the keys table is refreshed with the usage');
    // The week view holds the same calls.
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.locator('section.usage[aria-busy="false"]').waitFor();
    assert.deepEqual(await chartTotals(page), { requests: 7, rateLimited: 2, bars: 1 });
    await page.getByRole('button', { name: 'Last 24 hours' }).click();
    await page.locator('section.usage[aria-busy="false"]').waitFor();
    await shot('3-usage');

    // Change the plan to Pro: the very next call has the new limit.
    await page.getByRole('button', { name: 'Change plan of e2e key' }).click();
    await page.locator('dialog').getByLabel(/^Pro/).check();
    await page.locator('dialog').getByRole('button', { name: 'Change plan' }).click();
    await page.locator('dialog').waitFor({ state: 'detached' });
    await row.locator('.tier-name:has-text("Pro")').waitFor();
    const afterTier = await callListings(server.base, key);
    assert.equal(afterTier.status, 200);
    assert.equal(afterTier.limit, '1000');

    // Revoke, after confirming (cancelling first changes nothing): the API refuses the key from the next call.
    await page.getByRole('button', { name: 'Revoke e2e key' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.locator('dialog').waitFor({ state: 'detached' });
    assert.equal((await callListings(server.base, key)).status, 200);
    await page.getByRole('button', { name: 'Revoke e2e key' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('dialog').waitFor({ state: 'detached' });
    await row.locator('.badge:has-text("Revoked")').waitFor();
    assert.equal((await callListings(server.base, key)).status, 401);
    assert.equal(await row.getByRole('button', { name: 'Revoke e2e key' }).count(), 0);
    await shot('4-revoked');

    // Webhooks: the user registers one through /v1 with a key of their own; the page shows it
    // (its description, markup included, as text) with the ping's delivery.
    assert.ok(eve);
    const hookKey = await admin<{ data: { key: string } }>(server.base, 'POST', '/keys', {
      user_id: eve.id,
      name: 'webhooks key',
      permissions: ['read:webhooks', 'write:webhooks'],
    });
    const hostileDescription = 'Orders <b onmouseover="window.__pwned = 3">feed</b>';
    const registered = await fetch(`${server.base}/v1/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${hookKey.data.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, description: hostileDescription }),
    });
    assert.equal(registered.status, 201, await registered.text());
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    let delivered = false;
    while (!delivered && Date.now() < deadline) {
      const hooks = await admin<{ data: Array<{ last_delivery: { status: string } | null }> }>(server.base, 'GET', `/webhooks?user_id=${eve.id}`);
      delivered = hooks.data[0]?.last_delivery?.status === 'delivered';
      if (!delivered) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(delivered, 'the ping was delivered');
    assert.deepEqual(receiver.received.map((event) => event.type), ['ping']);
    // Choosing the user again loads their details afresh.
    await page.getByRole('button', { name: hostileName, exact: true }).click();
    const hookRow = page.locator('.webhooks-table tbody tr');
    await hookRow.waitFor();
    const hookCells = await hookRow.locator('td').allTextContents();
    assert.equal(hookCells[0], receiver.url);
    assert.equal(hookCells[2], hostileDescription);
    assert.match(hookCells[3] ?? '', /Active/);
    assert.match(hookCells[4] ?? '', /delivered\s*ping/);
    assert.match(hookCells[4] ?? '', /HTTP 204 · 1 attempt/);
    assert.equal(await page.locator('.webhooks-table b').count(), 0);
    await page.locator('.keys-table tr:has-text("e2e key") .badge:has-text("Revoked")').waitFor();
    await shot('5-webhooks');

    // Signing out forgets the token.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#sign-in').waitFor();
    assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);

    assert.deepEqual(watch.problems(), [], 'no script errors and no Content-Security-Policy violations');
    assert.deepEqual(unprotected, [], 'every dashboard file carries the security headers');
    assert.ok(!requestedUrls.some((url) => url.includes(OPERATOR_TOKEN)), 'the operator token never appears in a URL');
    assert.ok(!requestedUrls.some((url) => !url.startsWith(server.base)), 'the page asks nothing of another origin');

    // The watch itself works: inline script and an inline style attribute are refused and reported.
    await page.evaluate(`
      const script = document.createElement('script');
      script.textContent = 'window.__inlineRan = 1';
      document.body.append(script);
      const styled = document.createElement('div');
      styled.setAttribute('style', 'color: red');
      document.body.append(styled);
    `);
    // Reports come back through a binding, a moment after the page sends them.
    const reportDeadline = Date.now() + STEP_TIMEOUT_MS;
    while (watch.problems().length < 3 && Date.now() < reportDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await page.evaluate<unknown>('window.__inlineRan'), undefined);
    const seen = watch.problems().join('\n');
    assert.match(seen, /CSP violation: script-src-elem blocked inline/);
    assert.match(seen, /CSP violation: style-src-attr blocked inline/);
    assert.match(seen, /console error: .*Content Security Policy/);
  },
);

/** WCAG contrast ratio of two opaque CSS rgb() colours. */
function contrastRatio(first: string, second: string): number {
  const luminance = (colour: string): number => {
    const [red, green, blue] = (colour.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((channel) => {
      const value = Number(channel) / 255;
      return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * red! + 0.7152 * green! + 0.0722 * blue!;
  };
  const [lighter, darker] = [luminance(first), luminance(second)].sort((left, right) => right - left);
  return (lighter! + 0.05) / (darker! + 0.05);
}

/**
 * Every visible button lies inside the viewport's width, and no box on the page scrolls
 * sideways inside itself (a table in a scrolling box would hide its action buttons).
 */
async function assertActionsInView(page: Page, where: string): Promise<void> {
  const problems = await page.evaluate<string[]>(`(() => {
    const problems = [];
    const width = document.documentElement.clientWidth;
    for (const button of document.querySelectorAll('button')) {
      if (button.closest('[hidden], dialog:not([open]), details:not([open]) > :not(summary)')) continue;
      const box = button.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.left < -1 || box.right > width + 1) problems.push('button "' + button.textContent.trim() + '" spans ' + Math.round(box.left) + '..' + Math.round(box.right) + ' of ' + width);
    }
    for (const element of document.querySelectorAll('body *')) {
      const overflow = getComputedStyle(element).overflowX;
      if ((overflow === 'auto' || overflow === 'scroll') && element.scrollWidth > element.clientWidth + 1) {
        problems.push(element.tagName.toLowerCase() + '.' + element.className + ' scrolls sideways (' + element.scrollWidth + ' > ' + element.clientWidth + ')');
      }
    }
    return problems;
  })()`);
  assert.deepEqual(problems, [], `${where}: every action is on screen without sideways scrolling`);
}

/** True when the page is wider than its viewport (a sideways scroll). */
function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1');
}

/**
 * Every visible form control (input, select, textarea) with its accessible name, computed as a
 * browser does for these elements: aria-labelledby, aria-label, then its <label>s.
 */
function controlNames(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const text = (node) => (node ? node.textContent.replace(/\\s+/g, ' ').trim() : '');
    const names = [];
    for (const control of document.querySelectorAll('input, select, textarea')) {
      if (control.type === 'hidden' || control.closest('[hidden]') || control.getClientRects().length === 0) continue;
      let name = '';
      const labelledBy = control.getAttribute('aria-labelledby');
      if (labelledBy) name = labelledBy.split(/\\s+/).map((id) => text(document.getElementById(id))).join(' ').trim();
      if (!name) name = (control.getAttribute('aria-label') || '').trim();
      if (!name && control.labels) name = [...control.labels].map(text).join(' ').trim();
      names.push(name || '(no name: ' + control.outerHTML.slice(0, 60) + ')');
    }
    return names;
  })()`);
}

async function assertControlsNamedUniquely(page: Page, where: string): Promise<void> {
  const names = await controlNames(page);
  assert.ok(names.length > 0, `${where}: controls found`);
  assert.ok(!names.some((name) => name.startsWith('(no name')), `${where}: every control has a name: ${names.join(' | ')}`);
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  assert.deepEqual(repeated, [], `${where}: no two controls share a name`);
}

/** The notice's box lies inside the viewport. */
async function assertNoticeInView(page: Page, where: string): Promise<void> {
  const notice = page.locator('#notice:not([hidden])');
  await notice.waitFor();
  const box = await notice.boundingBox();
  const viewport = page.viewportSize()!;
  assert.ok(box, `${where}: the notice has a box`);
  assert.ok(box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width, `${where}: the notice ${JSON.stringify(box)} is inside ${JSON.stringify(viewport)}`);
}

test(
  'the dashboard moderates: Listings and Audit pages, suspend/unsuspend/delete with confirmations, notices in view, 390 px wide, unique control names, fresh "Used"',
  { skip: search.found ? false : search.reason, timeout: 300_000 },
  async (t) => {
    assert.ok(search.found);
    const cleanups: Array<() => unknown> = [];
    t.after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'dashboard-moderation-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    mkdirSync(ARTIFACTS, { recursive: true });
    const server = await startServer(dataDir);
    cleanups.push(() => stopServer(server.child));
    const browser = await launchChromium(search.path);
    cleanups.push(() => browser.close());

    // Data to moderate: a creator with a key and two listings, and another user.
    const creator = await admin<{ data: { id: string } }>(server.base, 'POST', '/users', { name: 'Carol Creator', email: 'carol@example.com', role: 'creator' });
    const key = (await admin<{ data: { key: string } }>(server.base, 'POST', '/keys', { user_id: creator.data.id, name: 'carol key', permissions: ['read:listings', 'write:listings'] })).data.key;
    for (const title of ['Needle prompt', 'Other tool']) {
      const created = await fetch(`${server.base}/v1/listings`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title, type: 'PROMPT', price: 1 }),
      });
      assert.equal(created.status, 201);
    }
    const freshKey = (await admin<{ data: { key: string } }>(server.base, 'POST', '/keys', { user_id: creator.data.id, name: 'fresh key' })).data.key;
    for (let index = 0; index < 30; index += 1) await admin(server.base, 'POST', '/users', { name: `Filler ${index}` });

    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    // The duplicate-email attempt answers 409 on purpose.
    const watch = await watchPages(context, [/status of 409/]);
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-moderation-${name}.png`), fullPage: false });
    await page.goto(`${server.base}/dashboard`);
    await page.locator('#token').fill(OPERATOR_TOKEN);
    await page.locator('#sign-in-button').click();
    await page.locator('.users-panel').waitFor();
    await assertControlsNamedUniquely(page, 'users page');

    // A notice appears inside the viewport even when the page is scrolled to its bottom:
    // creating a user with a taken email.
    await page.getByLabel('Name', { exact: true }).fill('Carol Again');
    await page.getByLabel('Email (optional)').fill('carol@example.com');
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.locator('.notice.error').waitFor();
    assert.match((await page.locator('.notice.error').textContent()) ?? '', /email/i);
    await assertNoticeInView(page, 'after a refused creation');
    await shot('1-notice-in-view');
    await page.getByRole('button', { name: 'Dismiss message' }).click();

    // The user: "Used never", then fresh after the key is used, without any click.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.getByRole('button', { name: 'Carol Creator', exact: true }).click();
    await page.locator('#user-title').waitFor();
    await assertControlsNamedUniquely(page, 'user detail');
    const keyRow = page.locator('.keys-table tr:has-text("fresh key")');
    await keyRow.locator('.last-used:has-text("Used never")').waitFor();
    assert.equal((await callListings(server.base, freshKey)).status, 200);
    await keyRow.locator('.last-used:has-text("Used just now")').waitFor({ timeout: 30_000 });

    // A pressed toggle stays readable under the pointer.
    await page.getByRole('button', { name: 'Usage of carol key' }).click();
    await page.locator('section.usage[aria-busy="false"]').waitFor();
    const pressed = page.locator('section.usage button[aria-pressed="true"]').first();
    await pressed.hover();
    const colours = await pressed.evaluate((button) => {
      const style = (globalThis as unknown as { getComputedStyle(element: unknown): { color: string; backgroundColor: string } }).getComputedStyle(button);
      return { color: style.color, background: style.backgroundColor };
    });
    const ratio = contrastRatio(colours.color, colours.background);
    assert.ok(ratio >= 4.5, `pressed and hovered: text ${colours.color} on ${colours.background}, contrast ${ratio.toFixed(2)} (WCAG AA needs 4.5)`);

    // Suspend, with a confirmation that says what happens and asks a reason.
    await page.getByRole('button', { name: 'Suspend user' }).click();
    const dialog = page.locator('dialog');
    assert.match((await dialog.textContent()) ?? '', /refused \(403\).*listings will disappear.*webhooks will receive nothing/s);
    await dialog.getByRole('button', { name: 'Suspend user' }).click();
    await dialog.locator('.error-text:not([hidden])').waitFor();
    await dialog.getByLabel('Reason').fill('spam reports');
    await dialog.getByRole('button', { name: 'Suspend user' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.user-detail .badge.status-suspended').waitFor();
    await assertNoticeInView(page, 'after suspending');
    assert.equal((await callListings(server.base, key)).status, 403);
    await shot('2-suspended');
    await page.getByRole('button', { name: 'Unsuspend user' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Unsuspend user' }).click();
    await page.locator('.user-detail .badge.status-active').waitFor();
    assert.equal((await callListings(server.base, key)).status, 200);

    // An invitation to the portal: the link is shown once and sets the user's password.
    await page.getByRole('button', { name: 'Invite to the portal' }).click();
    const link = await page.getByLabel('The invitation link').inputValue();
    assert.match(link, /\/portal#invitation=[A-Za-z0-9_-]{43}$/);
    await assertControlsNamedUniquely(page, 'user detail with an invitation link');
    const setPassword = await fetch(`${server.base}/portal/v1/password`, {
      method: 'POST',
      headers: { Origin: server.base, 'Content-Type': 'application/json' },
      body: JSON.stringify({ invitation: link.split('#invitation=')[1], password: 'carol sets a password' }),
    });
    assert.equal(setPassword.status, 201);
    await page.getByRole('button', { name: 'Hide the link' }).click();

    // The Listings page: search by text, remove with a reason, restore.
    await page.getByRole('button', { name: 'Listings', exact: true }).click();
    await page.locator('.listings-table').waitFor();
    await assertControlsNamedUniquely(page, 'listings page');
    await page.getByLabel('Text in title, description or tags').fill('needle');
    await page.getByRole('button', { name: 'Search listings' }).click();
    await page.locator('.listings-table tbody tr').first().waitFor();
    await page.locator('.listings-table tbody tr:has-text("Other tool")').waitFor({ state: 'detached' });
    assert.equal(await page.locator('.listings-table tbody tr').count(), 1);
    await page.getByRole('button', { name: 'Remove Needle prompt' }).click();
    assert.match((await page.locator('dialog').textContent()) ?? '', /leaves every list.*404.*listing\.removed/s);
    await page.locator('dialog').getByLabel('Reason').fill('trademark');
    await page.locator('dialog').getByRole('button', { name: 'Remove listing' }).click();
    await page.locator('.listings-table .badge.status-removed').waitFor();
    assert.match((await page.locator('.listings-table tbody tr').textContent()) ?? '', /trademark/);
    const visible = await (await fetch(`${server.base}/v1/listings?q=needle`, { headers: { Authorization: `Bearer ${key}` } })).json() as { data: unknown[] };
    assert.deepEqual(visible.data, [], 'gone from the public list');
    await page.locator('#listing-status, select[name="status"]').first().selectOption('removed');
    await page.getByRole('button', { name: 'Search listings' }).click();
    await shot('3-listings');
    await page.getByRole('button', { name: 'Restore Needle prompt' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Restore listing' }).click();
    await page.locator('.listings-table .badge.status-removed').waitFor({ state: 'detached' });

    // The Audit page lists what was done, newest first.
    await page.getByRole('button', { name: 'Audit', exact: true }).click();
    await page.locator('.audit-table').waitFor();
    await assertControlsNamedUniquely(page, 'audit page');
    const actions = await page.locator('.audit-table tbody tr td:nth-child(2)').allTextContents();
    assert.deepEqual(actions.slice(0, 6), [
      'listing.restore',
      'listing.remove',
      `portal.password_set by user ${creator.data.id}`,
      'user.invite',
      'user.unsuspend',
      'user.suspend',
    ]);
    await shot('4-audit');

    // Phone width: no sideways scroll on any page, notices still in view.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const name of ['Users', 'Listings', 'Audit']) {
      await page.getByRole('button', { name, exact: true }).click();
      await page.locator(`.${name.toLowerCase()}-${name === 'Users' ? 'panel' : 'page'}`).waitFor();
      await page.waitForTimeout(200);
      assert.equal(await scrollsSideways(page), false, `${name} page scrolls sideways at 390 px`);
      await assertActionsInView(page, `${name} page at 390 px`);
      await page.screenshot({ path: join(ARTIFACTS, `dashboard-moderation-390-${name.toLowerCase()}.png`), fullPage: true });
    }
    await page.getByRole('button', { name: 'Users', exact: true }).click();
    await page.getByRole('button', { name: 'Carol Creator', exact: true }).click();
    await page.locator('#user-title').waitFor();
    assert.equal(await scrollsSideways(page), false, 'user detail scrolls sideways at 390 px');
    await assertActionsInView(page, 'user detail at 390 px');

    // Delete, after a confirmation that says what happens.
    await page.getByRole('button', { name: 'Delete user' }).click();
    assert.match((await page.locator('dialog').textContent()) ?? '', /key is revoked.*webhook removed.*listing taken down.*erased.*cannot be undone/s);
    await page.locator('dialog').getByRole('button', { name: 'Delete user' }).click();
    await page.locator('.user-detail .badge.status-erased').waitFor();
    await page.locator('#user-title:has-text("(erased user)")').waitFor();
    assert.ok(!((await page.locator('.user-detail').textContent()) ?? '').includes('carol@example.com'), 'the erased email is no longer shown');
    await assertNoticeInView(page, 'after deleting, at 390 px');
    assert.equal((await callListings(server.base, key)).status, 401);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-moderation-390-erased.png'), fullPage: false });

    assert.deepEqual(watch.problems(), [], 'no script errors and no Content-Security-Policy violations');
  },
);
