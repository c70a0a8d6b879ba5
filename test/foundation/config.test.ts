// Configuration from the environment (contract section 1): defaults, accepted values, and one
// clear line plus a non-zero exit for anything else — before the server listens.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { ConfigError, DEFAULT_RETRY_DELAYS_MS, loadConfig } from '../../src/config.ts';

test('defaults follow the contract', () => {
  const config = loadConfig({});
  assert.equal(config.port, 3000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.dataDir, './data');
  assert.equal(config.brand, 'market');
  assert.equal(config.operatorToken, null);
  assert.equal(config.demo, true);
  assert.equal(config.webhookAllowPrivate, false);
  assert.deepEqual(config.webhookRetryDelaysMs, DEFAULT_RETRY_DELAYS_MS);
  assert.deepEqual(DEFAULT_RETRY_DELAYS_MS, [5000, 300000, 1800000, 7200000, 18000000, 36000000]);
  // A request waits at most 2 s for its instance to catch up with writes acknowledged elsewhere.
  assert.equal(config.catchUpWaitMs, 2000);
});

test('accepted values are read', () => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    DATA_DIR: ':memory:',
    MARKETPLACE_BRAND: 'acme',
    MARKETPLACE_ADMIN_TOKEN: 'a-long-enough-operator-token',
    MARKETPLACE_DEMO: '0',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_DELAYS_MS: '10,20,30',
    CATCH_UP_WAIT_MS: '5000',
  });
  assert.equal(config.port, 8080);
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.dataDir, null);
  assert.equal(config.brand, 'acme');
  assert.equal(config.demo, false);
  assert.equal(config.webhookAllowPrivate, true);
  assert.deepEqual(config.webhookRetryDelaysMs, [10, 20, 30]);
  assert.equal(config.catchUpWaitMs, 5000);
});

const BAD_SETTINGS: Array<[string, Record<string, string>, RegExp]> = [
  ['port not a number', { PORT: 'eighty' }, /PORT/],
  ['port out of range', { PORT: '70000' }, /PORT/],
  ['empty host', { HOST: ' ' }, /HOST/],
  ['brand with capitals', { MARKETPLACE_BRAND: 'Acme' }, /MARKETPLACE_BRAND/],
  ['demo flag not 0/1', { MARKETPLACE_DEMO: 'yes' }, /MARKETPLACE_DEMO/],
  ['retry delays not numbers', { WEBHOOK_RETRY_DELAYS_MS: '5s,10s' }, /WEBHOOK_RETRY_DELAYS_MS/],
  ['private flag not 0/1', { WEBHOOK_ALLOW_PRIVATE: 'maybe' }, /WEBHOOK_ALLOW_PRIVATE/],
  ['catch-up wait too short for one catch-up', { CATCH_UP_WAIT_MS: '99' }, /CATCH_UP_WAIT_MS/],
  ['catch-up wait not a number', { CATCH_UP_WAIT_MS: '2s' }, /CATCH_UP_WAIT_MS/],
];

for (const [name, env, pattern] of BAD_SETTINGS) {
  test(`bad config is one clear error: ${name}`, () => {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && pattern.test(error.message) && !error.message.includes('\n'),
    );
  });
}

test('the server exits 1 with one line on bad config, before listening', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: 'not-a-port', DATA_DIR: ':memory:' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(result.status, 1);
  assert.equal(result.stdout, '');
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /^configuration error: PORT must be/);
});

test('DATABASE_URL and REDIS_URL go together, need the operator token, and must be URLs of their kind', () => {
  const token = { MARKETPLACE_ADMIN_TOKEN: 'a-long-enough-operator-token' };
  const both = loadConfig({ ...token, DATABASE_URL: 'postgres://app:secret@db:5432/market', REDIS_URL: 'redis://cache:6379' });
  assert.equal(both.databaseUrl, 'postgres://app:secret@db:5432/market');
  assert.equal(both.redisUrl, 'redis://cache:6379');
  assert.equal(loadConfig({}).databaseUrl, null);
  assert.equal(loadConfig({}).redisUrl, null);
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ ...token, DATABASE_URL: 'postgres://db/market' }, /DATABASE_URL is set but REDIS_URL is not/],
    [{ ...token, REDIS_URL: 'redis://cache' }, /REDIS_URL is set but DATABASE_URL is not/],
    [{ DATABASE_URL: 'postgres://db/market', REDIS_URL: 'redis://cache' }, /MARKETPLACE_ADMIN_TOKEN/],
    [{ ...token, DATABASE_URL: 'mysql://db/market', REDIS_URL: 'redis://cache' }, /DATABASE_URL must be a postgres:\/\/ URL/],
    [{ ...token, DATABASE_URL: 'postgres://db/market', REDIS_URL: 'not a url' }, /REDIS_URL must be a redis:\/\/ URL/],
  ];
  for (const [env, message] of refused) {
    assert.throws(() => loadConfig(env), (error: Error) => error instanceof ConfigError && message.test(error.message) && !error.message.includes('secret'));
  }
});

test('TRUST_PROXY in the environment: parsed, and a bad entry is a configuration error', () => {
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy, ['10.0.0.0/8', '::1']);
  assert.deepEqual(loadConfig({}).trustProxy, []);
  assert.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/40' }), /TRUST_PROXY/);
});

test('REDIS_TLS_CA: only with a rediss:// REDIS_URL, and the file must exist', () => {
  const base = { DATABASE_URL: 'postgres://db/market', MARKETPLACE_ADMIN_TOKEN: 'a-test-operator-token-0123' };
  assert.equal(loadConfig({ ...base, REDIS_URL: 'rediss://cache:6380', REDIS_TLS_CA: import.meta.filename }).redisTlsCaFile, import.meta.filename);
  assert.throws(() => loadConfig({ ...base, REDIS_URL: 'redis://cache:6379', REDIS_TLS_CA: import.meta.filename }), /rediss:\/\//);
  assert.throws(() => loadConfig({ ...base, REDIS_URL: 'rediss://cache:6380', REDIS_TLS_CA: '/nonexistent/ca.pem' }), /does not exist/);
  assert.throws(() => loadConfig({ ...base, REDIS_URL: 'http://cache' }), /REDIS_URL must be a redis:\/\/ URL/);
});
