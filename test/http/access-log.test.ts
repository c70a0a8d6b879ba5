// The access log writes its lines in batches: every answered request still gets exactly one
// whole JSON line (many requests in flight), all written by the time the server has closed,
// and a lone request's line comes soon without more traffic.

import assert from 'node:assert/strict';
import test from 'node:test';
import { AccessLog, type AccessLogEntry } from '../../src/http/access-log.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer } from '../helpers/server.ts';

interface LogLine {
  time: string;
  method: string;
  route: string | null;
  path?: string;
  status: number;
  duration_ms: number;
  key_id: string | null;
  request_id: string;
}

function logLines(output: string[]): LogLine[] {
  const text = output.join('');
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), 'the log ends with a whole line');
  return text
    .slice(0, -1)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

test('many requests in flight, then an immediate close: one whole line per answer, all written when close returns', async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { output });
  const { key, keyId } = await server.userWithKey('creator', ['read:listings']);
  // Four waves of 100 requests in flight at once.
  const requestIds: Array<string | null> = [];
  for (let wave = 0; wave < 4; wave++) {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        index % 4 === 3 ? server.request('GET', `/v1/no/such/path/${wave}-${index}`, { key }) : server.request('GET', '/v1/listings?limit=20', { key }),
      ),
    );
    requestIds.push(...answers.map((answer) => answer.headers.get('x-request-id')));
  }
  // Closed at once, with the last wave's lines possibly still waiting for their batch.
  await server.close();

  const lines = logLines(output).filter((line) => line.key_id === keyId);
  assert.equal(lines.length, 400, 'one line per answered request');
  assert.deepEqual(new Set(lines.map((line) => line.request_id)), new Set(requestIds), 'each line names its answer');
  for (const line of lines) {
    assert.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    if (line.status === 200) {
      assert.equal(line.route, 'GET /v1/listings');
      assert.equal(line.path, undefined, 'a matched route never logs the raw path');
    } else {
      assert.equal(line.status, 404);
      assert.equal(line.route, null);
      assert.match(line.path!, /^\/v1\/no\/such\/path\/\d-\d+$/);
    }
  }
  const times = lines.map((line) => line.time);
  assert.deepEqual(times, [...times].sort(), 'lines are written in the order the requests finished');
});

test('a lone request is logged soon, without waiting for more traffic or for close', async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { output });
  const answer = await server.request('GET', '/healthz');
  assert.equal(answer.status, 200);
  await eventually(async () => logLines(output).length > 0, 30_000, 'the access-log line');
  const lines = logLines(output);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.route, 'GET /healthz');
  assert.equal(lines[0]!.request_id, answer.headers.get('x-request-id'));
});

test('each line is exactly the JSON of its fields, whatever a 404 path holds', () => {
  const written: string[] = [];
  const now = Date.UTC(2026, 10, 23, 17, 38, 4, 15);
  const log = new AccessLog((text) => written.push(text), () => now);
  const entries: AccessLogEntry[] = [
    { method: 'GET', route: 'GET /v1/listings', path: '/v1/listings', status: 200, durationMs: 0.1234567, keyId: 'key_1', requestId: 'a-b' },
    { method: 'GET', route: null, path: '/v1/"quoted"\\back\u0001ctl/é/\u2028/' + 'x'.repeat(300), status: 404, durationMs: 12, keyId: null, requestId: 'c-d' },
    { method: 'DELETE', route: 'DELETE /v1/listings/:id', path: '/v1/listings/lst_1', status: 500, durationMs: Number.NaN, keyId: 'k"2', requestId: 'e' },
  ];
  for (const entry of entries) log.record(entry);
  log.flush();
  const expected = entries.map((entry) =>
    JSON.stringify({
      time: new Date(now).toISOString(),
      method: entry.method,
      route: entry.route,
      path: entry.route === null ? entry.path.slice(0, 200) : undefined,
      status: entry.status,
      duration_ms: Math.round(entry.durationMs * 1000) / 1000,
      key_id: entry.keyId,
      request_id: entry.requestId,
    }),
  );
  assert.equal(written.join(''), `${expected.join('\n')}\n`);
});
