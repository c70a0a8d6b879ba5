// Where the portal's notices appear, in headless Chromium against a real server: a notice with a
// long message never covers the header or its Sign out button, at 390 and at 1280 px, whether
// the page is at its top or scrolled. Skipped, with the reason, only when no Chromium is found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findChromium, sharedChromium, signInThroughForm } from '../dashboard/browser.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

const search = findChromium();
const skip = search.found ? false : search.reason;
const browserFor = sharedChromium(search);

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

for (const width of [390, 1280]) {
  test(`a notice never covers the header or Sign out (${width} px)`, { skip, timeout: 120_000 }, async (t) => {
    const server = await startServer(t);
    const user = await signedInUser(server);
    for (let index = 0; index < 8; index += 1) await server.request('POST', '/portal/v1/keys', { headers: user.headers, body: { name: `key ${index}` } });
    const browser = await browserFor(t);
    const context = await browser.newContext({ viewport: { width, height: 700 } });
    t.after(() => context.close());
    const page = await context.newPage();
    await page.goto(`${server.url}/portal`);
    await signInThroughForm(page, user);

    await page.evaluate(async () => {
      const notices = await import('/dashboard/notice.js' as string);
      notices.showNotice('A long message that takes more than one line at a phone width, so that it is as tall as a notice gets. '.repeat(2), 'error');
    });
    const notice = page.locator('#notice');
    await notice.waitFor();
    for (const scrolled of [false, true]) {
      if (scrolled) await page.evaluate('window.scrollTo(0, 200)');
      const noticeBox = (await notice.boundingBox())!;
      const header = (await page.locator('header.topbar').boundingBox())!;
      assert.ok(!overlaps(noticeBox, header), `${scrolled ? 'scrolled: ' : ''}the notice ${JSON.stringify(noticeBox)} covers the header ${JSON.stringify(header)}`);
      // Sign out is still what a tap on it reaches.
      const signOut = (await page.locator('#sign-out').boundingBox())!;
      const reached = await page.evaluate(`document.elementFromPoint(${signOut.x + signOut.width / 2}, ${signOut.y + signOut.height / 2})?.id ?? ''`);
      if (!scrolled) assert.equal(reached, 'sign-out');
    }
  });
}
