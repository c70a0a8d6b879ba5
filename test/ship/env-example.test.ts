// .env.example against the code that reads the environment: every variable loadConfig reads is
// listed, and every default the file shows is the one the server really takes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { settingsRead } from '../docs/claims.ts';

const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
// `# NAME=value`: a variable and its default (nothing after '=' means unset by default).
const listed = new Map([...text.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => [match[1]!, match[2]!]));

test('.env.example lists every variable the server reads', async (t) => {
  const read = settingsRead();
  assert.ok(read.size >= 10, `loadConfig read ${[...read].join(', ')}`);
  // NODE_ENV is the platform's, not a setting of this server (it only changes a default).
  assert.deepEqual([...read].filter((name) => !listed.has(name) && name !== 'NODE_ENV'), []);
  // The operator CLI's own variable, and those of features configured elsewhere.
  for (const name of ['MARKETPLACE_URL', 'MAX_CONNECTIONS', 'CORS_ORIGINS', 'DATABASE_URL', 'REDIS_URL']) {
    await t.test(name, async () => {
      assert.ok(listed.has(name), name);
    });
  }
});

test('each default .env.example shows is the default the server takes', () => {
  const defaults = loadConfig({});
  for (const [name, value] of listed) {
    if (value === '' || name === 'MARKETPLACE_URL') continue;
    assert.deepEqual(loadConfig({ [name]: value }), defaults, `${name}=${value}`);
  }
});
