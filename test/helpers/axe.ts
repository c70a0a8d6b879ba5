// axe-core in a Playwright page for the browser tests: loaded as an init script (it comes
// through the DevTools protocol, so the pages' Content-Security-Policy does not block it), and
// the findings of impact serious or critical under the WCAG 2.2 AA rules as readable lines.
// @example
//   await context.addInitScript({ path: AXE_PATH });
//   assert.deepEqual(await seriousFindings(page, '390 px security'), []);

import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

export const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'];

/** The serious and critical findings on the page as it is now, one readable line each. */
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
