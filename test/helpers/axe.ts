// axe-core for the browser tests of one screen or flow: load it into every page of a context
// (as an init script, which comes through the DevTools protocol, so the pages' CSP does not block
// it), and list the findings of impact serious or critical under the WCAG 2.2 AA rules, one
// readable line each. test/portal/accessibility-browser.test.ts walks every screen with it.

import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';

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
