// startServer() embedded in this test process (the `marketplace-api` entry), and the version
// everywhere it is reported: --version of the server and the CLI, /healthz, the operator stats
// and the OpenAPI document.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { AdminClient, MarketplaceApiError, MarketplaceClient } from '../../src/client/index.ts';
import { runCli } from '../../src/cli.ts';
import { ConfigError, startServer } from '../../src/index.ts';
import { eventually } from '../helpers/eventually.ts';

const run = promisify(execFile);
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

test('startServer() with no options: a free port, an in-memory store, the demo keys and an operator token', async (t) => {
  const output: string[] = [];
  const server = await startServer({ writeOut: (text) => output.push(text), writeErr: (text) => output.push(text) });
  t.after(() => server.close());
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(
    server.demoKeys.map(({ user, role }) => ({ user, role })),
    [
      { user: 'Ada Creator', role: 'creator' },
      { user: 'Grace Creator', role: 'creator' },
      { user: 'Max Member', role: 'member' },
    ],
  );
  for (const demo of server.demoKeys) {
    assert.match(demo.key, /^market_live_/);
    assert.ok(demo.permissions.includes('read:listings'));
  }

  const creator = server.demoKeys[0]!;
  const client = new MarketplaceClient({ baseUrl: server.url, apiKey: creator.key });
  const created = await client.listings.create({ title: 'Embedded listing', type: 'TOOL', price: 4 });
  const read = await client.listings.get(created.id);
  assert.equal(read.title, 'Embedded listing');
  assert.equal(read.price, 4);

  const member = new MarketplaceClient({ baseUrl: server.url, apiKey: server.demoKeys[2]!.key, retry: { enabled: false } });
  await assert.rejects(member.listings.create({ title: 'Not allowed', type: 'TOOL', price: 1 }), (error: unknown) => {
    return error instanceof MarketplaceApiError && error.status === 403;
  });

  const admin = new AdminClient({ baseUrl: server.url, token: server.adminToken });
  const users = await admin.users.list();
  assert.equal(users.pagination.total, 3);
  // The access log is off unless asked for, and nothing else was printed.
  assert.deepEqual(output, []);
});

test('startServer() options mirror the environment: port, brand, demo, adminToken, accessLog', async (t) => {
  const port = await freePort();
  const output: string[] = [];
  const server = await startServer({
    port,
    brand: 'acme',
    demo: true,
    adminToken: 'embedded-operator-token-123',
    accessLog: true,
    writeOut: (text) => output.push(text),
  });
  t.after(() => server.close());
  assert.equal(server.url, `http://127.0.0.1:${port}`);
  assert.equal(server.adminToken, 'embedded-operator-token-123');
  assert.match(server.demoKeys[0]!.key, /^acme_live_/);
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  // The access log writes in batches: wait (bounded) for the request's line.
  await eventually(async () => output.length > 0, 30_000, 'the access-log line');
  const lines = output.join('').trim().split('\n').map((line) => JSON.parse(line) as { route: string; status: number });
  assert.deepEqual(lines.map(({ route, status }) => ({ route, status })), [{ route: 'GET /healthz', status: 200 }]);

  const empty = await startServer({ demo: false });
  t.after(() => empty.close());
  assert.deepEqual(empty.demoKeys, []);
  const admin = new AdminClient({ baseUrl: empty.url, token: empty.adminToken });
  assert.equal((await admin.users.list()).pagination.total, 0);
});

test('startServer() refuses bad options with the same ConfigError as the environment, and leaves nothing running', async () => {
  await assert.rejects(startServer({ brand: 'Not A Brand' }), (error: unknown) => error instanceof ConfigError && /MARKETPLACE_BRAND/.test(error.message));
  await assert.rejects(startServer({ adminToken: 'short' }), (error: unknown) => error instanceof ConfigError && /MARKETPLACE_ADMIN_TOKEN/.test(error.message));
  await assert.rejects(startServer({ port: 70_000 }), (error: unknown) => error instanceof ConfigError && /PORT/.test(error.message));
  await assert.rejects(startServer({ webhookRetryDelaysMs: [-1] }), (error: unknown) => error instanceof ConfigError && /WEBHOOK_RETRY_DELAYS_MS/.test(error.message));
  // A port already taken: the listen error reaches the caller.
  const first = await startServer({ demo: false });
  const port = Number(new URL(first.url).port);
  await assert.rejects(startServer({ port, demo: false }), /EADDRINUSE/);
  await first.close();
});

test('close() stops accepting connections and frees the port', async () => {
  const server = await startServer({ demo: false });
  await server.close();
  await assert.rejects(fetch(`${server.url}/healthz`));
  const port = Number(new URL(server.url).port);
  const again = await startServer({ port, demo: false });
  await again.close();
});

test('the version is reported by /healthz, the operator stats and the OpenAPI document', async (t) => {
  const server = await startServer({ demo: false });
  t.after(() => server.close());
  const health = (await (await fetch(`${server.url}/healthz`)).json()) as { status: string; version: string };
  assert.deepEqual(health, { status: 'ok', version: PACKAGE_VERSION });
  const admin = new AdminClient({ baseUrl: server.url, token: server.adminToken });
  const stats = (await admin.stats()) as { version?: string };
  assert.equal(stats.version, PACKAGE_VERSION);
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { info: { version: string } };
  assert.equal(document.info.version, PACKAGE_VERSION);
});

test('--version: the CLI and the server process print the version and exit 0', async () => {
  const out: string[] = [];
  const code = await runCli(['--version'], { stdout: { write: (text: string) => out.push(text) }, stderr: { write: () => {} }, env: {} });
  assert.equal(code, 0);
  assert.equal(out.join(''), `${PACKAGE_VERSION}\n`);

  const cwd = new URL('../..', import.meta.url);
  for (const script of ['src/main.ts', 'src/cli.ts']) {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '--version'], { cwd, timeout: 60_000 });
    assert.equal(stdout, `${PACKAGE_VERSION}\n`, script);
  }
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
