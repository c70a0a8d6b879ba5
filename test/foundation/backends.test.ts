// The back-ends are named in words true for each: in the start banner and GET /admin/v1/stats
// (the file log and its directory, memory only, PostgreSQL's host and database, Redis's), and
// each log reports only counters that mean something for it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describePostgres } from '../../src/backends/shared-records.ts';
import { startBanner } from '../../src/banner.ts';
import { startServer } from '../helpers/server.ts';

test('a file-backed server: "file log in <dir>" and "in this process"; the file reports fsyncs and its size', async (t) => {
  const server = await startServer(t);
  const stats = await server.admin('GET', '/admin/v1/stats');
  assert.deepEqual(stats.body.data.backends, { records: `file log in ${server.dataDir}`, limits: 'in this process' });
  assert.equal(typeof stats.body.data.store.fsyncs, 'number');
  assert.equal(typeof stats.body.data.store.logBytes, 'number');
  assert.equal(stats.body.data.store.commits, undefined);
  assert.deepEqual(server.app.backends, stats.body.data.backends);
});

test('a memory-only server: "memory only (nothing kept)"', async (t) => {
  const server = await startServer(t, { dataDir: null });
  assert.equal(server.app.backends.records, 'memory only (nothing kept)');
});

test('the banner names where records and limits are kept', () => {
  const text = startBanner({ url: 'http://127.0.0.1:3000', demoKeys: [], operatorToken: { fromEnvironment: true }, backends: { records: 'PostgreSQL at db:5432/market (TLS)', limits: 'Redis at cache:6380 (TLS)' } });
  assert.match(text, /^records: PostgreSQL at db:5432\/market \(TLS\); limits: Redis at cache:6380 \(TLS\)$/m);
});

test('PostgreSQL is described by host, port and database, "(TLS)" when sslmode asks for it, never with its password', () => {
  assert.equal(describePostgres('postgres://user:secret@db.internal:5432/market'), 'db.internal:5432/market');
  assert.equal(describePostgres('postgres://user:secret@db.internal/market?sslmode=verify-full&sslrootcert=/ca.pem'), 'db.internal/market (TLS)');
  assert.equal(describePostgres('postgres://db/market?sslmode=disable'), 'db/market');
  assert.doesNotMatch(describePostgres('postgres://user:secret@db/market'), /secret|user/);
});
