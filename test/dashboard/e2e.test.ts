// The dashboard end to end, in a real headless Chromium against a real server: sign in, create a
// user and a key, use the key, watch the usage chart, change the tier, revoke, see the API refuse.
// Skipped (with the reason) when Chromium, playwright-core or the server entry point is missing.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = join(REPO, 'src', 'main.ts');
const ARTIFACTS = join(REPO, 'test', 'artifacts');
const OPERATOR_TOKEN = 'e2e-operator-token-0123456789abcdef';

// Only what this test uses of playwright-core, so the file type-checks without it installed.
interface Locator {
  click(): Promise<void>;
  check(): Promise<void>;
  fill(value: string): Promise<void>;
  selectOption(value: string): Promise<string[]>;
  inputValue(): Promise<string>;
  textContent(): Promise<string | null>;
  getAttribute(name: string): Promise<string | null>;
  count(): Promise<number>;
  first(): Locator;
  locator(selector: string): Locator;
  getByRole(role: string, options: { name: string | RegExp; exact?: boolean }): Locator;
  getByLabel(text: string | RegExp, options?: { exact?: boolean }): Locator;
  waitFor(options?: { state?: 'attached' | 'detached' | 'visible' | 'hidden'; timeout?: number }): Promise<void>;
  screenshot(options: { path: string }): Promise<Buffer>;
}
interface PlaywrightResponse {
  status(): number;
  headers(): Record<string, string>;
}
interface Page extends Locator {
  goto(url: string): Promise<PlaywrightResponse | null>;
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  on(event: 'pageerror', listener: (error: Error) => void): void;
  on(event: 'request', listener: (request: { url(): string }) => void): void;
  evaluate<Result>(script: string): Promise<Result>;
  waitForFunction(script: string, arg?: unknown, options?: { timeout?: number }): Promise<unknown>;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<Buffer>;
}
interface BrowserContext {
  newPage(): Promise<Page>;
  close(): Promise<void>;
}
interface PlaywrightCore {
  chromium: {
    launchPersistentContext(
      userDataDir: string,
      options: { executablePath: string; headless: boolean; args: string[]; viewport: { width: number; height: number } },
    ): Promise<BrowserContext>;
  };
}

async function loadPlaywright(): Promise<PlaywrightCore | null> {
  const specifier = 'playwright-core';
  try {
    return (await import(specifier)) as PlaywrightCore;
  } catch {
    return null;
  }
}

const playwright = await loadPlaywright();
const skipReason = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (apt-get install chromium)`
  : !playwright
    ? 'playwright-core is not installed (npm install --save-dev playwright-core)'
    : !existsSync(ENTRY)
      ? `no server entry point at ${ENTRY}`
      : false;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `npm start`'s entry point with an in-memory store and waits for /healthz. */
async function startServer(): Promise<{ base: string; child: ChildProcess; output: () => string }> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: ':memory:',
      MARKETPLACE_ADMIN_TOKEN: OPERATOR_TOKEN,
      MARKETPLACE_DEMO: '0',
      ACCESS_LOG: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`);
    try {
      const response = await fetch(`${base}/healthz`);
      if (response.ok) return { base, child, output: () => output };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not answer /healthz within 20 s:\n${output}`);
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A request to the public API with a key, as a client program would make it. */
async function callListings(base: string, key: string): Promise<{ status: number; limit: string | null }> {
  const response = await fetch(`${base}/v1/listings`, { headers: { Authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return { status: response.status, limit: response.headers.get('x-ratelimit-limit') };
}

test('the operator dashboard in headless Chromium: users, keys, usage, tier, revoke', { skip: skipReason, timeout: 120_000 }, async (t) => {
  assert.ok(playwright);
  const server = await startServer();
  t.after(() => stopServer(server.child));
  const profile = mkdtempSync(join(tmpdir(), 'dashboard-e2e-'));
  t.after(() => rmSync(profile, { recursive: true, force: true }));
  mkdirSync(ARTIFACTS, { recursive: true });

  const context = await playwright.chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  const requestedUrls: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A 401 while signing in with a wrong token is expected; anything else red is not.
    if (message.type() === 'error' && !/status of 401/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => requestedUrls.push(request.url()));
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

  // The page and its headers.
  const response = await page.goto(`${server.base}/dashboard`);
  assert.ok(response);
  assert.equal(response.status(), 200);
  const headers = response.headers();
  assert.match(headers['content-type'] ?? '', /^text\/html/);
  assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['x-frame-options'], 'DENY');

  // Sign in: a wrong token is refused, the right one is kept for this tab only.
  await page.locator('#token').fill('not-the-token');
  await page.locator('#sign-in-button').click();
  await page.locator('.notice.error').waitFor();
  await page.locator('#token').fill(OPERATOR_TOKEN);
  await page.locator('#sign-in-button').click();
  await page.locator('.users-panel').waitFor();
  assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('marketplace.operatorToken')"), OPERATOR_TOKEN);
  assert.equal(await page.evaluate<number>('localStorage.length'), 0);

  // A user whose name is markup: it must show as text and never run.
  const hostileName = 'Eve <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
  await page.getByLabel('Name', { exact: true }).fill(hostileName);
  await page.getByLabel('Email (optional)').fill('eve@example.com');
  await page.locator('.create-user select').selectOption('creator');
  await page.getByRole('button', { name: 'Create user' }).click();
  await page.locator('#user-title').waitFor();
  assert.equal(await page.locator('#user-title').textContent(), hostileName);
  assert.equal(await page.getByRole('button', { name: hostileName, exact: true }).count(), 1);
  assert.equal(await page.locator('main script, main img[src="x"]').count(), 0);
  assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined);
  await shot('1-user');

  // A key with a tiny custom limit, so a few calls reach the limit and show as 429s.
  const createKey = page.locator('details.create-key');
  if ((await createKey.getAttribute('open')) === null) await page.locator('details.create-key summary').click();
  await page.getByLabel('Key name (optional)').fill('e2e key');
  await page.getByLabel('Custom', { exact: true }).check();
  await page.getByLabel('Custom limit, requests per minute').fill('5');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.locator('#new-key-secret');
  await secret.waitFor();
  const key = await secret.inputValue();
  assert.match(key, /^(mk_|[a-z][a-z0-9]+_live_)[A-Za-z0-9]+$/);
  assert.match((await page.locator('.secret-reveal').textContent()) ?? '', /only time the full key is shown/);
  await shot('2-new-key');
  await page.getByRole('button', { name: /I have stored it/ }).click();
  await secret.waitFor({ state: 'detached' });
  assert.ok(!(await page.evaluate<string>('document.body.textContent')).includes(key), 'the key is gone from the page');

  // Usage before any call: an empty chart.
  await page.getByRole('button', { name: 'Usage of e2e key' }).click();
  const chart = page.locator('svg.usage-chart');
  await chart.waitFor();
  assert.equal(await chart.getAttribute('data-total-requests'), '0');

  // Use the key: five calls pass, the next two are rate-limited.
  const statuses: number[] = [];
  for (let call = 0; call < 7; call += 1) statuses.push((await callListings(server.base, key)).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);

  // The chart gains the calls (counters may reach the usage view a moment later: refresh until then).
  const refresh = page.getByRole('button', { name: 'Refresh' });
  const deadline = Date.now() + 10_000;
  let drawn = 0;
  while (Date.now() < deadline) {
    await refresh.click();
    await page.waitForFunction("document.querySelector('.usage p.muted')?.textContent.startsWith('Updated')");
    drawn = Number(await page.locator('svg.usage-chart').getAttribute('data-total-requests'));
    if (drawn >= 5 && Number(await page.locator('svg.usage-chart').getAttribute('data-total-rate-limited')) >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(drawn >= 5, `the chart shows the calls (saw ${drawn})`);
  assert.ok((await page.locator('svg.usage-chart .bar').count()) >= 1);
  assert.ok((await page.locator('svg.usage-chart .limit-mark').count()) >= 1, '429s are marked');
  assert.match((await page.locator('.endpoints-table').textContent()) ?? '', /\/v1\/listings/);
  await shot('3-usage');

  // Change the tier to Pro: the very next call has the new limit.
  await page.getByRole('button', { name: 'Change tier of e2e key' }).click();
  await page.locator('dialog').getByLabel(/^Pro/).check();
  await page.locator('dialog').getByRole('button', { name: 'Change tier' }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
  await page.locator('.keys-table tr:has-text("e2e key") .tier-name:has-text("Pro")').waitFor();
  const afterTier = await callListings(server.base, key);
  assert.equal(afterTier.status, 200);
  assert.equal(afterTier.limit, '1000');

  // Revoke, after confirming: the API refuses the key from the next call.
  await page.getByRole('button', { name: 'Revoke e2e key' }).click();
  await page.locator('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
  await page.locator('.keys-table tr:has-text("e2e key") .badge:has-text("Revoked")').waitFor();
  assert.equal((await callListings(server.base, key)).status, 401);
  await shot('4-revoked');

  assert.deepEqual(problems, [], 'no script errors and no Content-Security-Policy violations');
  assert.ok(!requestedUrls.some((url) => url.includes(OPERATOR_TOKEN)), 'the operator token never appears in a URL');
});
