// PostgreSQL over TLS, as managed databases require: sslmode and sslrootcert in DATABASE_URL
// (the driver reads them), checked against a private authority made for the test. Every
// connection the server opens (the pool and the change listener) is encrypted, the stats name
// the database as reached over TLS, and a certificate the client cannot check stops the start.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../helpers/server.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from '../helpers/services.ts';
import { hasOpenssl, makeTestCertificates, type TestCertificates } from '../helpers/tls-certificates.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer') || (hasOpenssl() ? false : 'openssl is not installed');
let certificates: TestCertificates;
let postgres: PostgresService;
let redis: RedisService;

before(async () => {
  if (skip) return;
  certificates = makeTestCertificates();
  postgres = await startPostgres({ tls: { certFile: certificates.certFile, keyFile: certificates.keyFile } });
  redis = await startRedis();
});
after(async () => {
  await postgres?.destroy();
  await redis?.destroy();
  certificates?.remove();
});

/** The server's connections to `database`: how many are encrypted and how many are not. */
async function connectionsTo(database: string): Promise<{ tls: number; plain: number }> {
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ tls: string; plain: string }>(
      `SELECT count(*) FILTER (WHERE s.ssl) AS tls, count(*) FILTER (WHERE NOT s.ssl) AS plain
         FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.datname = $1 AND a.pid <> pg_backend_pid()`,
      [database],
    );
    return { tls: Number(rows[0]!.tls), plain: Number(rows[0]!.plain) };
  } finally {
    await admin.end();
  }
}

test('DATABASE_URL with sslmode=verify-full and sslrootcert: every connection is encrypted, and the stats say so', { skip, timeout: 60_000 }, async (t) => {
  const url = `${postgres.createDatabase('tls_verified')}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certificates.caFile)}`;
  const server = await startServer(t, { dataDir: null, env: { DATABASE_URL: url, REDIS_URL: redis.url } });
  const { key } = await server.userWithKey('creator', ['write:listings', 'read:listings']);
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'Over TLS', price: 1, type: 'TOOL' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const connections = await connectionsTo('tls_verified');
  assert.ok(connections.tls >= 2, `the pool and the listener: ${JSON.stringify(connections)}`);
  assert.equal(connections.plain, 0);
  const stats = await server.admin('GET', '/admin/v1/stats');
  assert.equal(stats.body.data.backends.records, `PostgreSQL at 127.0.0.1:${postgres.port}/tls_verified (TLS)`);
  assert.equal(stats.body.data.store.fsyncs, undefined, 'no file is fsynced');
  assert.equal(stats.body.data.store.logBytes, undefined, 'no file has a size');
  assert.ok(stats.body.data.store.commits >= 2, 'commits are counted instead');
});

test('sslmode=verify-full without the private authority: the start stops on the certificate, nothing is written', { skip, timeout: 60_000 }, async () => {
  const url = `${postgres.createDatabase('tls_unverified')}?sslmode=verify-full`;
  const config = loadConfig({ PORT: '0', DATABASE_URL: url, REDIS_URL: redis.url, MARKETPLACE_ADMIN_TOKEN: 'a-test-operator-token-0123', MARKETPLACE_DEMO: '0', ACCESS_LOG: '0' });
  await assert.rejects(createApp({ config, writeErr: () => {} }), /certificate/);
  assert.deepEqual(await connectionsTo('tls_unverified'), { tls: 0, plain: 0 });
});
