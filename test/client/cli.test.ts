// The operator CLI, run in-process through runCli: against a fake admin server (what it sends,
// what it prints, its exit codes: 0 done, 1 failed, 2 wrong command line), and against the
// real server (a user and key made, used, changed and revoked; stats, compact, a backup; a key
// holder's webhook deliveries and redelivery, with a real receiver on 127.0.0.1).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer } from '../helpers/server.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

type Reply = { status: number; body: string | object; contentType?: string };

async function fakeAdminServer(t: TestContext, reply: (request: SeenRequest) => Reply) {
  const requests: SeenRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const seen = { method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body: text ? JSON.parse(text) : undefined };
      requests.push(seen);
      const answer = reply(seen);
      res.writeHead(answer.status, { 'Content-Type': answer.contentType ?? 'application/json' });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests };
}

async function temporaryDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'marketplace-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the CLI and captures what it writes. */
async function run(argv: string[], env: Record<string, string | undefined> = {}, cwd?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
    ...(cwd ? { cwd } : {}),
  });
  return { code, stdout, stderr };
}

const TOKEN = 'admin-token-0123456789';

test('wrong command lines exit 2 with one error line and the usage', async (t) => {
  const cases: Array<[string, string[], RegExp]> = [
    ['no command', [], /no command given/],
    ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['unknown sub-command', ['keys', 'rotate'], /unknown keys command "rotate"; one of: create, list, update, usage, revoke/],
    ['unknown option', ['users', 'list', '--colour'], /Unknown option '--colour'/],
    ['option of another command', ['users', 'list', '--rate-limit', '5'], /--rate-limit does not apply/],
    ['missing --name', ['users', 'create'], /--name is required/],
    ['bad --role', ['users', 'create', '--name', 'Ada', '--role', 'admin'], /--role must be creator or member/],
    ['--rate-limit not an integer', ['keys', 'create', '--user-id', 'usr_1', '--rate-limit', '1.5'], /--rate-limit must be an integer >= 1/],
    ['--page zero', ['users', 'list', '--page', '0'], /--page must be an integer >= 1/],
    ['bad --prefix', ['keys', 'create', '--user-id', 'usr_1', '--prefix', 'test'], /--prefix must be mk or live/],
    ['bad --granularity', ['keys', 'usage', 'key_1', '--granularity', 'week'], /--granularity must be hour or day/],
    ['revoke without id', ['keys', 'revoke'], /expected 1 argument/],
    ['extra argument', ['compact', 'now'], /expected 0 argument/],
    ['update with nothing to change', ['keys', 'update', 'key_1'], /nothing to change/],
    ['repair without a data dir', ['repair'], /repair needs --data-dir/],
    ['redeliver without the event id', ['webhooks', 'redeliver', 'wh_1'], /expected 2 argument/],
    ['the admin token on a key holder\'s command', ['webhooks', 'deliveries', 'wh_1', '--token', TOKEN], /--token does not apply/],
    ['an API key on an operator command', ['users', 'list', '--key', 'market_live_x'], /--key does not apply/],
  ];
  for (const [name, argv, message] of cases) {
    await t.test(`${name}: marketplace ${argv.join(' ')}`, async () => {
      const result = await run(argv, { MARKETPLACE_URL: 'http://127.0.0.1:1', MARKETPLACE_ADMIN_TOKEN: TOKEN });
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr.split('\n')[0] ?? '', message);
      assert.match(result.stderr, /usage: marketplace|marketplace help/);
    });
  }
});

test('help prints every command to stdout and exits 0', async (t) => {
  const result = await run(['help']);
  assert.equal(result.code, 0);
  for (const command of ['users create', 'users list', 'users update', 'keys create', 'keys list', 'keys update', 'keys usage', 'keys revoke', 'webhooks list', 'webhooks deliveries', 'webhooks redeliver', 'stats', 'compact', 'backup', 'repair']) {
    await t.test(command, async () => {
      assert.ok(result.stdout.includes(command), command);
    });
  }
  const commandHelp = await run(['keys', 'create', '--help']);
  assert.equal(commandHelp.code, 0);
  assert.match(commandHelp.stdout, /usage: marketplace keys create --user-id/);
});

test('users create sends the fields with the admin token and prints the JSON answer', async (t) => {
  const user = { id: 'usr_1', name: 'Ada', email: 'ada@example.com', role: 'creator', bio: '' };
  const server = await fakeAdminServer(t, () => ({ status: 201, body: { data: user } }));
  const result = await run(['users', 'create', '--name', 'Ada', '--email', 'ada@example.com', '--role', 'creator', '--url', server.url, '--token', TOKEN]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), user);
  assert.deepEqual(server.requests, [
    { method: 'POST', path: '/admin/v1/users', authorization: `Bearer ${TOKEN}`, body: { name: 'Ada', email: 'ada@example.com', role: 'creator' } },
  ]);
});

test('URL from MARKETPLACE_URL and token from <DATA_DIR>/admin-token', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 201, body: { data: { id: 'key_1', key: 'mk_secret' } } }));
  const dir = await temporaryDir(t);
  await writeFile(join(dir, 'admin-token'), `${TOKEN}\n`, { mode: 0o600 });
  const result = await run(
    ['keys', 'create', '--user-id', 'usr_1', '--permissions', 'read:listings, GET /v1/users/me', '--rate-limit', '250', '--prefix', 'mk'],
    { MARKETPLACE_URL: server.url, DATA_DIR: dir },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).key, 'mk_secret');
  assert.equal(server.requests[0]?.authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(server.requests[0]?.body, { user_id: 'usr_1', permissions: ['read:listings', 'GET /v1/users/me'], rate_limit: 250, prefix: 'mk' });
});

test('keys list, update and revoke map to GET, PATCH and DELETE', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 200, body: { data: { id: 'key_1' } } }));
  const connection = ['--url', server.url, '--token', TOKEN];
  assert.equal((await run(['keys', 'list', '--user-id', 'usr_1', '--limit', '50', ...connection])).code, 0);
  assert.equal((await run(['keys', 'update', 'key_1', '--rate-limit', '10', '--name', 'ci', ...connection])).code, 0);
  assert.equal((await run(['keys', 'revoke', 'key_1', ...connection])).code, 0);
  assert.deepEqual(
    server.requests.map((request) => [request.method, request.path, request.body]),
    [
      ['GET', '/admin/v1/keys?limit=50&user_id=usr_1', undefined],
      ['PATCH', '/admin/v1/keys/key_1', { rate_limit: 10, name: 'ci' }],
      ['DELETE', '/admin/v1/keys/key_1', undefined],
    ],
  );
});

test('a server error is one line on stderr and exit 1', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 404, body: { error: 'Key not found', request_id: 'req_9' } }));
  const result = await run(['keys', 'revoke', 'key_missing', '--url', server.url, '--token', TOKEN]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr, 'error: Key not found (HTTP 404) — request id req_9\n');
});

test('no token anywhere: exit 1 saying where to put one', async (t) => {
  const dir = await temporaryDir(t);
  const result = await run(['users', 'list'], { MARKETPLACE_URL: 'http://127.0.0.1:1' }, dir);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^error: no admin token: cannot read .*data\/admin-token \(ENOENT\); pass --token/);
});

test('a key holder\'s command with no API key anywhere: exit 1 saying where to put one, nothing sent', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 200, body: { data: [] } }));
  const result = await run(['webhooks', 'deliveries', 'wh_1', '--url', server.url], { MARKETPLACE_ADMIN_TOKEN: TOKEN });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^error: no API key: set MARKETPLACE_KEY \(or pass --key\)/);
  assert.deepEqual(server.requests, []);
});

test('backup streams the log into the file through a temporary file, mode 0600', async (t) => {
  const log = '{"format":1}\n{"op":"put","collection":"users"}\n';
  const server = await fakeAdminServer(t, () => ({ status: 200, body: log, contentType: 'application/x-ndjson' }));
  const dir = await temporaryDir(t);
  const result = await run(['backup', 'copy.ndjson', '--url', server.url, '--token', TOKEN], {}, dir);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { file: join(dir, 'copy.ndjson'), bytes: Buffer.byteLength(log) });
  assert.equal(await readFile(join(dir, 'copy.ndjson'), 'utf8'), log);
  assert.equal((await stat(join(dir, 'copy.ndjson'))).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(dir), ['copy.ndjson'], 'no temporary file left behind');
});

test('backup into a folder that does not exist yet creates it (mode 0700) instead of failing', async (t) => {
  const log = '{"format":1}\n';
  const server = await fakeAdminServer(t, () => ({ status: 200, body: log, contentType: 'application/x-ndjson' }));
  const dir = await temporaryDir(t);
  const result = await run(['backup', 'backups/2026/copy.log', '--url', server.url, '--token', TOKEN], {}, dir);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { file: join(dir, 'backups/2026/copy.log'), bytes: Buffer.byteLength(log) });
  assert.equal(await readFile(join(dir, 'backups/2026/copy.log'), 'utf8'), log);
  assert.equal((await stat(join(dir, 'backups'))).mode & 0o777, 0o700);
  assert.deepEqual(await readdir(join(dir, 'backups/2026')), ['copy.log'], 'no temporary file left behind');
});

test('backup to a path whose folder cannot be made says so in one line, without a raw ENOENT on a hidden file', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 200, body: '{"format":1}\n', contentType: 'application/x-ndjson' }));
  const dir = await temporaryDir(t);
  await writeFile(join(dir, 'not-a-folder'), 'x');
  const result = await run(['backup', 'not-a-folder/copy.log', '--url', server.url, '--token', TOKEN], {}, dir);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^error: cannot write the backup to .*not-a-folder\/copy\.log: .*\n$/);
  assert.doesNotMatch(result.stderr, /\.tmp/);
});

test('backup onto an existing file refuses without --force and leaves it as it was; --force replaces it', async (t) => {
  const log = '{"format":1}\n';
  const server = await fakeAdminServer(t, () => ({ status: 200, body: log, contentType: 'application/x-ndjson' }));
  const dir = await temporaryDir(t);
  await writeFile(join(dir, 'copy.log'), 'an older backup\n');
  const refused = await run(['backup', 'copy.log', '--url', server.url, '--token', TOKEN], {}, dir);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^error: .*copy\.log already exists; choose another file or add --force to replace it\n$/);
  assert.equal(await readFile(join(dir, 'copy.log'), 'utf8'), 'an older backup\n');

  const replaced = await run(['backup', 'copy.log', '--force', '--url', server.url, '--token', TOKEN], {}, dir);
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.equal(await readFile(join(dir, 'copy.log'), 'utf8'), log);
});

test('a failed backup leaves no file behind', async (t) => {
  const server = await fakeAdminServer(t, () => ({ status: 401, body: { error: 'Admin token missing or invalid' } }));
  const dir = await temporaryDir(t);
  const result = await run(['backup', 'copy.ndjson', '--url', server.url, '--token', 'wrong-token-000000'], {}, dir);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Admin token missing or invalid \(HTTP 401\)/);
  assert.deepEqual(await readdir(dir), []);
});

test('against the real server, token read from <data-dir>/admin-token: users, keys, stats, compact, backup', async (t) => {
  // No MARKETPLACE_ADMIN_TOKEN: the server makes the token file, and the CLI finds it there.
  const server = await startServer(t, { env: { MARKETPLACE_ADMIN_TOKEN: '' } });
  const dataDir = server.dataDir!;
  const env = { MARKETPLACE_URL: server.url };
  const cli = async (...argv: string[]) => {
    const result = await run([...argv, '--data-dir', dataDir], env);
    assert.equal(result.code, 0, `marketplace ${argv.join(' ')}: ${result.stderr}`);
    assert.equal(result.stderr, '');
    return JSON.parse(result.stdout);
  };

  const user = await cli('users', 'create', '--name', 'Ada', '--email', 'ada@example.com', '--role', 'member');
  assert.match(user.id, /^usr_/);
  assert.equal((await cli('users', 'update', user.id, '--role', 'creator')).role, 'creator');
  assert.equal((await cli('users', 'list')).pagination.total, 1);

  const key = await cli('keys', 'create', '--user-id', user.id, '--permissions', 'read:listings, write:listings', '--rate-limit', '5', '--name', 'cli');
  assert.match(key.key, /^market_live_/);
  const asAda = (method: string, path: string, body?: unknown) => server.request(method, path, { key: key.key, body });
  const created = await asAda('POST', '/v1/listings', { title: 'Made with a CLI key', type: 'TOOL', price: 1 });
  assert.equal(created.status, 201, created.text);

  const listed = await cli('keys', 'list', '--user-id', user.id);
  assert.deepEqual(listed.data.map((entry: { id: string }) => entry.id), [key.id]);
  assert.equal((await cli('keys', 'update', key.id, '--rate-limit', '9')).rate_limit, 9);
  assert.equal((await asAda('GET', '/v1/listings')).headers.get('x-ratelimit-limit'), '9');
  const usage = await cli('keys', 'usage', key.id, '--granularity', 'day');
  assert.equal(usage.totals.requests, 2, 'the POST and the GET');
  assert.deepEqual(usage.window, { ...usage.window, limit: 9, remaining: 7 });
  assert.equal((await cli('webhooks', 'list', '--user-id', user.id)).pagination.total, 0);
  assert.ok((await cli('keys', 'revoke', key.id)).revoked_at);
  assert.equal((await asAda('GET', '/v1/listings')).status, 401, 'refused from the very next request');

  const stats = await cli('stats');
  assert.equal(stats.users, 1);
  assert.equal(stats.keys, 1);
  const compacted = await cli('compact');
  assert.ok(compacted.bytes_after <= compacted.bytes_before);

  const target = join(await temporaryDir(t), 'backup.log');
  const saved = await cli('backup', target);
  assert.equal(saved.file, target);
  assert.equal((await stat(target)).mode & 0o777, 0o600);
  const text = await readFile(target, 'utf8');
  assert.equal(saved.bytes, Buffer.byteLength(text));
  assert.equal(JSON.parse(text.split('\n')[0] ?? '').format, 'marketplace-api-log');
  assert.ok(text.includes(created.body.data.id), 'the backup holds the listing');
  assert.ok(!text.includes(key.key), 'never the plain key');

  const missing = await run(['keys', 'revoke', 'key_missing', '--data-dir', dataDir], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: Key not found \(HTTP 404\) — request id [0-9a-f-]{36}\n$/);
  const wrongToken = await run(['stats', '--token', 'wrong-token-0000000000'], env);
  assert.equal(wrongToken.code, 1);
  assert.match(wrongToken.stderr, /operator token is missing or wrong\. \(HTTP 401\)/);
});

test('against the real server with an API key: webhooks deliveries and redeliver; 404, 403 and the hourly 429 as one line, exit 1', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const receiver = await startReceiver(t, answer(204));
  const owner = await server.userWithKey('member', ['read:webhooks', 'write:webhooks']);
  const readOnly = await server.createKey(owner.userId, { permissions: ['read:webhooks'] });
  const env = { MARKETPLACE_URL: server.url, MARKETPLACE_KEY: owner.key };
  const cli = async (...argv: string[]) => {
    const result = await run(argv, env);
    assert.equal(result.code, 0, `marketplace ${argv.join(' ')}: ${result.stderr}`);
    assert.equal(result.stderr, '');
    return JSON.parse(result.stdout);
  };
  const made = await server.request('POST', '/v1/webhooks', { key: owner.key, body: { url: receiver.url, events: ['ping'] } });
  assert.equal(made.status, 201, made.text);
  const webhookId: string = made.body.data.id;
  await eventually(async () => (await cli('webhooks', 'deliveries', webhookId)).length === 1, 10_000, 'the ping outcome');
  const [ping] = await cli('webhooks', 'deliveries', webhookId);
  assert.deepEqual([ping.event, ping.status, ping.response_status], ['ping', 'delivered', 204]);

  assert.deepEqual(await cli('webhooks', 'redeliver', webhookId, ping.event_id), { webhook_id: webhookId, event_id: ping.event_id, type: 'ping', status: 'pending' });
  await eventually(async () => receiver.received.length === 2, 10_000, 'the redelivery');
  assert.equal(receiver.received[1]!.headers['webhook-id'], receiver.received[0]!.headers['webhook-id']);
  assert.equal(receiver.received[1]!.body, receiver.received[0]!.body);

  const unknownEvent = await run(['webhooks', 'redeliver', webhookId, 'evt_never_sent'], env);
  assert.equal(unknownEvent.code, 1);
  assert.equal(unknownEvent.stdout, '');
  assert.match(unknownEvent.stderr, /^error: .*not found.* \(HTTP 404\) — request id [0-9a-f-]{36}\n$/i);
  // --key wins over MARKETPLACE_KEY.
  const readOnlyKey = await run(['webhooks', 'redeliver', webhookId, ping.event_id, '--key', readOnly.key], env);
  assert.equal(readOnlyKey.code, 1);
  assert.match(readOnlyKey.stderr, /\(HTTP 403\).*needs one of: .*write:webhooks/);

  // The hour's other 59 turns (the 404 took none), taken at once by recoveries with nothing to send.
  const since = new Date(Date.now() - 60_000).toISOString();
  const taken = await Promise.all(Array.from({ length: 59 }, () => server.request('POST', `/v1/webhooks/${webhookId}/recover`, { key: owner.key, body: { since } })));
  assert.deepEqual(new Set(taken.map((response) => `${response.status} ${response.body.events}`)), new Set(['202 0']));
  const limited = await run(['webhooks', 'redeliver', webhookId, ping.event_id], env);
  assert.equal(limited.code, 1);
  assert.match(limited.stderr, /^error: You have asked for 60 redeliveries in the last hour.*Try again in \d+ seconds\. \(HTTP 429\)/);
  assert.equal(receiver.received.length, 2, 'nothing more was sent');
});

test('repair, offline: refused while a server holds the data dir; then moves a damaged line aside and the server starts again', async (t) => {
  const dataDir = await temporaryDir(t);
  const server = await startServer(t, { dataDir }); // closed below; closing twice is harmless
  for (const name of ['Ada', 'Grace', 'Max']) assert.equal((await server.admin('POST', '/admin/v1/users', { name })).status, 201);
  const locked = await run(['repair', '--data-dir', dataDir]);
  assert.equal(locked.code, 1);
  assert.match(locked.stderr, /already/);
  await server.close();

  const logPath = join(dataDir, 'marketplace.log');
  const lines = (await readFile(logPath, 'utf8')).split('\n');
  lines[2] = '{"op":"put","c":"users"'; // the second user's line, cut short in the middle of the log
  await writeFile(logPath, lines.join('\n'));
  const repaired = await run(['repair', '--data-dir', dataDir]);
  assert.equal(repaired.code, 0, repaired.stderr);
  const report = JSON.parse(repaired.stdout);
  assert.equal(report.repaired, true);
  assert.equal(report.lines_kept, 2);
  assert.deepEqual(report.damaged_lines.map((line: { line: number }) => line.line), [3]);

  const restarted = await startServer(t, { dataDir });
  const users = await restarted.admin('GET', '/admin/v1/users');
  assert.deepEqual(users.body.data.map((user: { name: string }) => user.name), ['Ada', 'Max']);
});

test('marketplace serve --help prints what serve reads and starts nothing: no server, no data dir, no demo keys', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'marketplace-serve-help-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
  // Run from the empty folder, so tsx is named by its full address.
  const tsx = import.meta.resolve('tsx');
  for (const flag of ['--help', '-h']) {
    const result = spawnSync(process.execPath, ['--import', tsx, cli, 'serve', flag], { cwd: work, encoding: 'utf8', env: { ...process.env, PORT: '0' }, timeout: 60_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^usage: marketplace serve/);
    assert.match(result.stdout, /MARKETPLACE_DEMO/);
    assert.doesNotMatch(result.stdout, /listening on|API keys/);
    assert.deepEqual(readdirSync(work), [], 'nothing was created');
  }
  const wrong = spawnSync(process.execPath, ['--import', tsx, cli, 'serve', '--port', '9'], { cwd: work, encoding: 'utf8', timeout: 60_000 });
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /serve takes no arguments/);
  assert.deepEqual(readdirSync(work), []);
});
