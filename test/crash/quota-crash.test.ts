// A crash gives back at most the quota counts since the last periodic save (contract section 23,
// docs/limits.md): the real server as a child process with a month quota on Free, its counts
// saved every QUOTA_SAVE_MS (test/crash/quota-server.ts). N requests answered; the test waits
// until the log on disk holds the saved count N (read from the file, no sleep), makes M more,
// SIGKILLs the server, and restarts it on the same DATA_DIR. The count it reports is exactly the
// last count on disk when it died: at least N (what was saved) and at most N + M (what was
// answered); what it gave back is at most the M unsaved requests.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/auth/plans.ts';
import { QUOTA_COUNTS } from '../../src/domain/records.ts';
import { decodeLine, LOG_FILE_NAME } from '../../src/store/format.ts';
import { eventually } from '../helpers/eventually.ts';
import { REPO_ROOT, ServerProcess } from './server-process.ts';

const OPERATOR_TOKEN = 'quota-crash-operator-token-0123456789';
/** Long enough that M requests and the kill fit between two saves on a busy machine, most runs; the checks hold either way. */
const SAVE_MS = 1_500;
const ANSWERED_BEFORE_SAVE = 7;
const ANSWERED_AFTER_SAVE = 5;
const QUOTA = { requests: 1_000, period: 'month' };

async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** The last count of `meterId` written to the log on disk, or null: what a restart reads. A torn last line is skipped, as the store does. */
function savedCount(dataDir: string, meterId: string): number | null {
  let used: number | null = null;
  const path = join(dataDir, LOG_FILE_NAME);
  if (!existsSync(path)) return null;
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    if (line === '') continue;
    let ops;
    try {
      ops = decodeLine(line);
    } catch {
      continue;
    }
    for (const op of ops) {
      if (op.op === 'put' && op.collection === QUOTA_COUNTS && op.id === meterId) used = (op.data as unknown as { used: number }).used;
    }
  }
  return used;
}

test('kill -9 gives back at most the quota counts since the last periodic save, never more than were answered', { timeout: 240_000, skip: !existsSync(join(REPO_ROOT, 'src/main.ts')) }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quota-crash-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = () => new ServerProcess({ dataDir, operatorToken: OPERATOR_TOKEN, entry: 'test/crash/quota-server.ts', env: { QUOTA_SAVE_MS: String(SAVE_MS) } });
  let server = start();
  t.after(() => server.kill());
  let base = await server.ready();

  const plans = DEFAULT_PLANS.map((plan) => (plan.id === 'free' ? { ...plan, quota: QUOTA } : plan));
  assert.equal((await call(base, 'PUT', '/admin/v1/plans', OPERATOR_TOKEN, { plans })).status, 200);
  const user = (await call(base, 'POST', '/admin/v1/users', OPERATOR_TOKEN, { name: 'Quota Crash' })).body.data;
  const made = await call(base, 'POST', '/admin/v1/keys', OPERATOR_TOKEN, { user_id: user.id, plan: 'free', permissions: ['read:listings'] });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const key = made.body.data;
  const meterId = `${user.id}/free`;

  let answered = 0;
  async function answer(count: number): Promise<void> {
    for (let index = 0; index < count; index += 1) {
      const reply = await call(base, 'GET', '/v1/listings?limit=1', key.key);
      assert.equal(reply.status, 200);
      answered += 1;
      assert.equal(reply.headers.get('x-quota-remaining'), String(QUOTA.requests - answered));
    }
  }

  await answer(ANSWERED_BEFORE_SAVE);
  // The periodic save, seen where a restart will read it: the log file.
  const waited = await eventually(async () => savedCount(dataDir, meterId) === ANSWERED_BEFORE_SAVE, 60_000, `the count ${ANSWERED_BEFORE_SAVE} saved to ${LOG_FILE_NAME}`);
  t.diagnostic(`the periodic save reached the log ${Math.round(waited)} ms after the ${ANSWERED_BEFORE_SAVE}th request`);

  await answer(ANSWERED_AFTER_SAVE);
  await server.kill();
  const onDisk = savedCount(dataDir, meterId)!;
  assert.ok(onDisk >= ANSWERED_BEFORE_SAVE && onDisk <= answered, `on disk at the kill: ${onDisk}`);

  server = start();
  base = await server.ready();
  const usage = await call(base, 'GET', `/admin/v1/keys/${key.id}/usage`, OPERATOR_TOKEN);
  assert.equal(usage.status, 200);
  const restored = usage.body.data.quota.used;
  t.diagnostic(`answered ${answered}, saved ${ANSWERED_BEFORE_SAVE} before the last ${ANSWERED_AFTER_SAVE}, on disk at the kill ${onDisk}, after the restart ${restored} (${answered - restored} given back)`);
  assert.equal(restored, onDisk, 'the restart reads the last count saved');
  assert.ok(restored >= ANSWERED_BEFORE_SAVE, `at least what was saved (${restored} < ${ANSWERED_BEFORE_SAVE})`);
  assert.ok(restored <= answered, `never more than was answered (${restored} > ${answered})`);
  assert.ok(answered - restored <= ANSWERED_AFTER_SAVE, 'given back: at most the requests since the save');

  // The key goes on counting from there, in the API's headers too.
  const next = await call(base, 'GET', '/v1/listings?limit=1', key.key);
  assert.equal(next.status, 200);
  assert.equal(next.headers.get('x-quota-remaining'), String(QUOTA.requests - restored - 1));
});
