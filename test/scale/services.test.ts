// The service helpers the tests of many instances stand on: a real PostgreSQL, Redis and nginx
// start on free ports, answer, and (PostgreSQL) stop and come back on the same port and data.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createConnection } from 'node:net';
import { test } from 'node:test';
import { startNginx, startPostgres, startRedis, skipUnlessServices } from '../helpers/services.ts';

test('PostgreSQL starts as an unprivileged user, keeps data across a stop and start', { skip: skipUnlessServices('postgresBin'), timeout: 120_000 }, async (t) => {
  const postgres = await startPostgres();
  t.after(() => postgres.destroy());
  const url = postgres.createDatabase('helper_check');
  const psql = (sql: string) =>
    spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qAtc', sql], { encoding: 'utf8' });
  assert.equal(psql('CREATE TABLE t (n int); INSERT INTO t VALUES (7)').status, 0);
  assert.equal(psql("SELECT current_setting('is_superuser') = 'on' AND session_user = 'marketplace'").stdout.trim(), 't');
  await postgres.stop();
  assert.notEqual(psql('SELECT 1').status, 0, 'a stopped PostgreSQL refuses connections');
  await postgres.start();
  assert.equal(psql('SELECT n FROM t').stdout.trim(), '7');
  if (process.getuid?.() === 0) {
    const owner = spawnSync('ps', ['-o', 'user=', '-C', 'postgres'], { encoding: 'utf8' }).stdout;
    assert.doesNotMatch(owner, /^root/m, 'PostgreSQL does not run as root');
  }
});

test('Redis answers PING on its free port', { skip: skipUnlessServices('redisServer'), timeout: 60_000 }, async (t) => {
  const redis = await startRedis();
  t.after(() => redis.destroy());
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = createConnection({ port: redis.port, host: '127.0.0.1' }, () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => {
      socket.destroy();
      resolve(chunk.toString());
    });
    socket.once('error', reject);
  });
  assert.equal(answer, '+PONG\r\n');
});

test('nginx spreads requests round-robin over its upstreams', { skip: skipUnlessServices('nginx'), timeout: 60_000 }, async (t) => {
  const servers: Server[] = [];
  const addresses: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    const server = createServer((_req, res) => res.end(name));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    addresses.push(`127.0.0.1:${(server.address() as { port: number }).port}`);
  }
  t.after(() => servers.forEach((server) => server.close()));
  const nginx = await startNginx(addresses);
  t.after(() => nginx.destroy());
  const seen: string[] = [];
  for (let index = 0; index < 9; index += 1) seen.push(await (await fetch(nginx.url)).text());
  assert.deepEqual([...seen].sort(), ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c']);
});
