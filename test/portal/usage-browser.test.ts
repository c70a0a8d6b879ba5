// A key's usage in the portal, in headless Chromium against a real server at 390 and 1280 px:
// it opens right under its key (not at the foot of the page), says it is open, closes with focus
// back on the button that opened it, reads as a compact table (one line of cells per endpoint,
// nothing scrolling sideways), and its chart's axis labels never overlap, for a day and a week.
// Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, sharedChromium, signInThroughForm, watchPages } from '../dashboard/browser.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

type Box = { x: number; y: number; width: number; height: number };

/** The boxes of the chart's hour/day labels, left to right. */
async function axisLabelBoxes(page: Page): Promise<Array<Box & { text: string }>> {
  const boxes = await page.locator('section.usage .chart-axis text').evaluateAll((nodes) =>
    nodes.map((node) => {
      const box = (node as any).getBoundingClientRect();
      return { text: (node as any).textContent as string, x: box.x, y: box.y, width: box.width, height: box.height };
    }),
  );
  return boxes.sort((left, right) => left.x - right.x);
}

test('usage opens under its key, closes back to its button, reads as a compact table, and its chart labels never overlap', { skip, timeout: 180_000 }, async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  // Several keys, so a panel drawn at the foot of the list would be far from the first card.
  const keys = [];
  for (const name of ['shop', 'backup', 'reports', 'mobile app']) {
    keys.push((await server.request('POST', '/portal/v1/keys', { headers: user.headers, body: { name, permissions: ['read:listings', 'GET /v1/users/me'] } })).body.data);
  }
  const used = keys.at(-1)!;
  // Traffic on three endpoints, sent at once.
  const auth = { authorization: `Bearer ${used.key}` };
  await Promise.all([
    ...Array.from({ length: 6 }, () => server.request('GET', '/v1/listings', { headers: auth })),
    ...Array.from({ length: 3 }, () => server.request('GET', '/v1/listings/lst_missing', { headers: auth })),
    ...Array.from({ length: 2 }, () => server.request('GET', '/v1/users/me', { headers: auth })),
  ]);

  const browser = await browserFor(t);
  for (const width of [390, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    t.after(() => context.close());
    const watch = await watchPages(context, [/status of 401 \(Unauthorized\)/]);
    const page = await context.newPage();
    await page.goto(`${server.url}/portal`);
    await signInThroughForm(page, user);
    const card = page.locator(`[data-key-id="${used.id}"]`);
    const opener = card.locator('button', { hasText: /^Usage$/ });
    await opener.waitFor();
    assert.equal(await opener.getAttribute('aria-expanded'), 'false', `${width} px: closed at first`);
    await opener.click();
    const usage = page.locator('section.usage[aria-busy="false"]');
    await usage.locator('.endpoints-table tbody tr').nth(2).waitFor({ timeout: 15_000 });
    assert.equal(await opener.getAttribute('aria-expanded'), 'true', `${width} px: the button says usage is open`);

    // Right under its key: the panel starts inside the card, or at most a line below it.
    const cardBox = (await card.boundingBox())!;
    const usageBox = (await usage.boundingBox())!;
    assert.ok(usageBox.y >= cardBox.y && usageBox.y <= cardBox.y + cardBox.height + 24, `${width} px: usage at ${usageBox.y}, its card from ${cardBox.y} to ${cardBox.y + cardBox.height}`);
    // And in sight: its heading is on screen once it opens.
    const heading = (await usage.locator('#usage-title').boundingBox())!;
    assert.ok(heading.y >= 0 && heading.y + heading.height <= 800, `${width} px: the usage heading is on screen (at ${heading.y})`);

    // One line of cells per endpoint, however narrow the screen, and nothing wider than it.
    const rows = await usage.locator('.endpoints-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...(tr as any).children].map((cell: any) => Math.round(cell.getBoundingClientRect().top))),
    );
    assert.equal(rows.length, 3, `${width} px: three endpoints`);
    for (const tops of rows) assert.ok(Math.max(...tops) - Math.min(...tops) <= 2, `${width} px: the cells of a row side by side, tops at ${tops.join(', ')}`);
    const sideways = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth);
    assert.ok(sideways <= 0, `${width} px: the page scrolls ${sideways} px sideways`);

    // The chart's labels, for a day and a week, never overlap one another.
    for (const range of ['day', 'week']) {
      await usage.locator(`button[data-range="${range}"]`).click();
      await page.locator(`section.usage[aria-busy="false"] button[data-range="${range}"][aria-pressed="true"]`).waitFor();
      const labels = await axisLabelBoxes(page);
      assert.ok(labels.length >= 3, `${width} px, ${range}: at least three labels (${labels.map((label) => label.text).join(' ')})`);
      for (let index = 1; index < labels.length; index += 1) {
        const before = labels[index - 1]!;
        const after = labels[index]!;
        assert.ok(before.x + before.width <= after.x, `${width} px, ${range}: "${before.text}" (to ${Math.round(before.x + before.width)}) overlaps "${after.text}" (from ${Math.round(after.x)})`);
      }
    }

    // Closing puts focus back on the button that opened it.
    await usage.locator('button', { hasText: 'Close usage' }).click();
    await page.locator('section.usage').waitFor({ state: 'detached' });
    assert.equal(await opener.getAttribute('aria-expanded'), 'false', `${width} px: the button says usage is closed`);
    const focused = await page.evaluate(() => {
      const active = (globalThis as any).document.activeElement;
      return { text: active.textContent.trim(), key: active.closest('[data-key-id]')?.dataset.keyId ?? null };
    });
    assert.deepEqual(focused, { text: 'Usage', key: used.id }, `${width} px: focus back on the Usage button`);
    assert.deepEqual(watch.problems(), []);
  }
});
