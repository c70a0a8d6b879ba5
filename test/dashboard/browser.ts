// Finding a Chromium for the dashboard's browser runs (e2e.test.ts, screenshot.ts), launching it
// through playwright-core, watching a page for script errors and Content-Security-Policy
// violations, and signing in through the portal's own form. Not a test file itself (no .test.ts), so `npm test` does not run it alone.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Program names tried on PATH, in order: Debian's package first, then other common builds. */
const PROGRAM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];
/** Places tried when PATH has none of them (a trimmed PATH under some CI runners). */
export const FALLBACK_PATHS = ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium'];

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export type ChromiumSearch = { found: true; path: string } | { found: false; reason: string };

/**
 * Where Chromium is: CHROMIUM_PATH when set (it must then exist: a wrong value is an error, not a
 * quiet skip), else the first of PROGRAM_NAMES on PATH, else a usual install location.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env, fallbacks: readonly string[] = FALLBACK_PATHS): ChromiumSearch {
  const chosen = env.CHROMIUM_PATH;
  if (chosen !== undefined && chosen !== '') {
    if (isExecutableFile(chosen)) return { found: true, path: chosen };
    throw new Error(`CHROMIUM_PATH is set to "${chosen}", which is not an executable file`);
  }
  const directories = (env.PATH ?? '').split(delimiter).filter((directory) => directory !== '');
  for (const name of PROGRAM_NAMES) {
    for (const directory of directories) {
      const candidate = join(directory, name);
      if (isExecutableFile(candidate)) return { found: true, path: candidate };
    }
  }
  for (const candidate of fallbacks) if (isExecutableFile(candidate)) return { found: true, path: candidate };
  return {
    found: false,
    reason:
      `no Chromium found (looked for ${PROGRAM_NAMES.join(', ')} on PATH${fallbacks.length > 0 ? ` and at ${fallbacks.join(', ')}` : ''}); ` +
      'install it (apt-get install chromium, as .ci/run does) or set CHROMIUM_PATH',
  };
}

/** A headless Chromium from `executablePath`; playwright gives it a temporary profile it removes on close. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    // Nothing in these runs should reach the network beyond 127.0.0.1.
    args: ['--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
}

/**
 * One Chromium shared by the tests of a file (launching one per test costs seconds on a busy
 * machine), launched on first use from `search` and closed when the test `t` ends.
 */
export function sharedChromium(search: ChromiumSearch): (t: TestContext) => Promise<Browser> {
  let shared: Browser | null = null;
  return async (t) => {
    if (!search.found) throw new Error(search.reason);
    shared ??= await launchChromium(search.path);
    t.after(async () => {
      await shared?.close();
      shared = null;
    });
    return shared;
  };
}

/** Signs `user` in through the portal's sign-in form on `page` (already at /portal), as a person would, and waits for Sign out. */
export async function signInThroughForm(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.locator('#sign-in-form input[name=email]').fill(user.email);
  await page.locator('#sign-in-form input[type=password]').fill(user.password);
  await page.locator('#sign-in-button').click();
  await page.locator('#sign-out').waitFor();
}

export interface PageWatch {
  /** Script errors, console errors and CSP violations seen so far, as lines a person can read. */
  problems(): string[];
}

/**
 * Watches every page of `context`: uncaught errors, console errors (except those `expected`
 * matches) and Content-Security-Policy violations. Violations are caught twice over: Chromium's
 * console line, and a `securitypolicyviolation` listener added before any page script runs (an
 * init script comes through the DevTools protocol, which the page's CSP does not govern).
 */
export async function watchPages(context: BrowserContext, expected: RegExp[] = []): Promise<PageWatch> {
  const problems: string[] = [];
  await context.exposeBinding('__reportCspViolation', (_source, text: string) => {
    problems.push(`CSP violation: ${text}`);
  });
  // A string, not a function: this file is type-checked without the DOM's types.
  await context.addInitScript(`
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__reportCspViolation(event.effectiveDirective + ' blocked ' + (event.blockedURI || 'inline') +
        ' (' + (event.sourceFile || 'page') + ':' + event.lineNumber + ')');
    });
  `);
  context.on('page', (page) => {
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      if (!expected.some((pattern) => pattern.test(text))) problems.push(`console error: ${text}`);
    });
  });
  return { problems: () => [...problems] };
}

/**
 * Waits until exactly `count` elements on `page` match `selector`. A function, not a string: the
 * pages' CSP (no 'unsafe-eval') refuses a string predicate once Playwright polls it.
 */
export function waitForCount(page: Page, selector: string, count: number): Promise<unknown> {
  return page.waitForFunction(([css, expected]) => (globalThis as any).document.querySelectorAll(css).length === expected, [selector, count] as const);
}
