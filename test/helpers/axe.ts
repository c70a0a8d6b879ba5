// axe-core for the browser tests of one screen or flow: load it into every page of a context
// (as an init script, which comes through the DevTools protocol, so the pages' CSP does not block
// it), and list the findings of impact serious or critical under the WCAG 2.2 AA rules, one
// readable line each. test/portal/accessibility-browser.test.ts walks every screen with it.

import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { watchPages } from '../dashboard/browser.ts';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'];

/** Makes axe available in every document `context` opens from now on. */
export async function loadAxe(context: BrowserContext): Promise<void> {
  await context.addInitScript({ path: AXE_PATH });
}

/** The serious and critical findings on `page` as it is now, each prefixed with `screen`. */
export async function seriousFindings(page: Page, screen: string): Promise<string[]> {
  const violations = await page.evaluate<Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[]; failureSummary: string }> }>, string[]>(
    async (tags) => {
      const result = await (globalThis as any).axe.run((globalThis as any).document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => ({ target: n.target, failureSummary: n.failureSummary })) }));
    },
    TAGS,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${screen}: ${v.impact} ${v.id} (${v.help}) at ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
}

/** How far the page scrolls sideways (0 or less: it does not). */
export function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth);
}

/**
 * A new page `width` px wide in a context of its own (closed after the test), with axe loaded
 * into every document it opens, at the portal's sign-in form on `url`. `problems()` lists the
 * page's errors and CSP violations, the 401 of the portal asking who is signed in excepted.
 */
export async function portalPageWithAxe(
  t: TestContext,
  browser: Browser,
  url: string,
  width: number,
  options: { context?: BrowserContextOptions; defaultTimeoutMs?: number } = {},
): Promise<{ page: Page; problems: () => string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, ...options.context });
  t.after(() => context.close());
  // Before signing in, the portal's GET /portal/v1/me is answered 401: expected.
  const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
  await loadAxe(context);
  const page = await context.newPage();
  if (options.defaultTimeoutMs !== undefined) page.setDefaultTimeout(options.defaultTimeoutMs);
  await page.goto(url);
  await page.locator('#sign-in-form').waitFor();
  return { page, problems: watch.problems };
}
