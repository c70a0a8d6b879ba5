// The developer portal end to end in headless Chromium against one real server (src/main.ts in
// a child process): the flow of browser-flow.ts. Skipped, with the reason, only when no Chromium
// is found (.ci/run installs it).

import { test } from 'node:test';
import { findChromium, launchChromium } from '../dashboard/browser.ts';
import { startMain } from '../helpers/main-process.ts';
import { temporaryDir } from '../helpers/server.ts';
import { runPortalFlow } from './browser-flow.ts';

const ADMIN_TOKEN = 'portal-e2e-operator-token-0123456789';
const search = findChromium();

test('the developer portal, from an invitation to signing out, on one server', { skip: search.found ? false : search.reason, timeout: 240_000 }, async (t) => {
  if (!search.found) return;
  const server = await startMain({ DATA_DIR: temporaryDir(t), MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN, MARKETPLACE_DEMO: '0', WEBHOOK_ALLOW_PRIVATE: '1' });
  t.after(() => {
    server.child.kill('SIGTERM');
  });
  const browser = await launchChromium(search.path);
  t.after(() => browser.close());
  await runPortalFlow(t, browser, { base: server.url, adminToken: ADMIN_TOKEN });
});
