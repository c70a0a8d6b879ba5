// Finding the browser for the end-to-end test: CHROMIUM_PATH first, then `chromium` (and kin) on
// PATH, then the usual install places; and when there is none, a reason that says what to do.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { findChromium } from './browser.ts';

function fakeProgram(directory: string, name: string, executable = true): string {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, name);
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, executable ? 0o755 : 0o644);
  return path;
}

test('findChromium: PATH, its order, executables only, CHROMIUM_PATH, and the reason when none', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'find-chromium-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const first = join(root, 'first');
  const second = join(root, 'second');
  const empty = join(root, 'empty');
  mkdirSync(empty);

  // `chromium` anywhere on PATH is found, first directory first; a file without x is not a program.
  fakeProgram(first, 'chromium', false);
  const onPath = fakeProgram(second, 'chromium');
  assert.deepEqual(findChromium({ PATH: [empty, first, second].join(delimiter) }, []), { found: true, path: onPath });

  // Debian's name beats Google's, wherever each sits on PATH.
  const chrome = fakeProgram(first, 'google-chrome');
  assert.deepEqual(findChromium({ PATH: [first, second].join(delimiter) }, []), { found: true, path: onPath });
  assert.deepEqual(findChromium({ PATH: first }, []), { found: true, path: chrome });

  // Nothing on PATH: the fallbacks, then a reason naming the fix.
  const fallback = fakeProgram(join(root, 'opt'), 'chromium');
  assert.deepEqual(findChromium({ PATH: empty }, [join(root, 'missing'), fallback]), { found: true, path: fallback });
  const none = findChromium({ PATH: empty }, [join(root, 'missing')]);
  assert.equal(none.found, false);
  assert.match(none.found ? '' : none.reason, /^no Chromium found .*chromium.*apt-get install chromium.*CHROMIUM_PATH/);
  assert.equal(findChromium({}, []).found, false);

  // CHROMIUM_PATH wins; a wrong one is an error, never a quiet skip.
  const chosen = fakeProgram(join(root, 'chosen'), 'my-chrome');
  assert.deepEqual(findChromium({ PATH: second, CHROMIUM_PATH: chosen }, []), { found: true, path: chosen });
  assert.throws(() => findChromium({ PATH: second, CHROMIUM_PATH: join(root, 'nope') }, []), /CHROMIUM_PATH is set to ".*nope", which is not an executable file/);
});
