// The request observer on its own: what it counts of a finished request, and to whom. Only a
// /v1 request whose key was found is counted for usage and charged CPU; every request gets its
// metrics and its access-log line, timed from its arrival; with nothing timing requests the
// arrival is 0 and the clock is not read.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'node:test';
import type { Caller } from '../../src/auth/authenticate.ts';
import { ManualClock } from '../../src/clock.ts';
import type { AccessLogEntry, AccessLog } from '../../src/http/access-log.ts';
import { KeyContext, type KeyCommitServices } from '../../src/http/key-context.ts';
import { KeylessContext } from '../../src/http/keyless-context.ts';
import type { KeyCpuBudget } from '../../src/pipeline/request-observer.ts';
import { RequestObserver } from '../../src/pipeline/request-observer.ts';
import type { Store } from '../../src/store/store.ts';

const request = (url: string) => ({ method: 'GET', url, headers: {} }) as unknown as IncomingMessage;
const response = {} as ServerResponse;

function observed(options: { accessLog?: boolean; metrics?: boolean; budget?: boolean } = {}) {
  const clock = new ManualClock();
  const usage: Array<[string, string, number]> = [];
  const metrics: Array<[string, string | null, number, number]> = [];
  const lines: AccessLogEntry[] = [];
  const charged: Array<[string, number]> = [];
  const observer = new RequestObserver({
    clock,
    usage: { recordRequest: (keyId, endpoint, status) => usage.push([keyId, endpoint, status]), recordListingView() {}, recordListingImpressions() {} },
    accessLog: options.accessLog === false ? null : ({ record: (entry: AccessLogEntry) => lines.push(entry) } as unknown as AccessLog),
    clientAddress: () => '192.0.2.1',
    metrics:
      options.metrics === false
        ? null
        : { recordRequest: (method, route, status, durationMs) => metrics.push([method, route, status, durationMs]) },
    cpuBudget: options.budget === false ? null : ({ chargeTimed: (keyId: string, ms: number) => charged.push([keyId, ms]) } as unknown as KeyCpuBudget),
  });
  return { clock, observer, usage, metrics, lines, charged };
}

function keyContext(keyId: string | null): KeyContext {
  const context = new KeyContext(request('/v1/listings?limit=20'), response, {} as KeyCommitServices);
  if (keyId !== null) context.caller = { key: { id: keyId } } as unknown as Caller;
  return context;
}

test('a /v1 request with its key: one usage count, its metrics, one access-log line timed from arrival, its work charged', () => {
  const { clock, observer, usage, metrics, lines, charged } = observed();
  const context = keyContext('key_1');
  const arrivedAt = observer.arrived();
  clock.advance(7);
  context.routeLabel = 'GET /v1/listings';
  const began = observer.workBegins();
  observer.workPauses(context, began);
  observer.finished(context, 200, arrivedAt);
  assert.deepEqual(usage, [['key_1', 'GET /v1/listings', 200]]);
  assert.deepEqual(metrics, [['GET', 'GET /v1/listings', 200, 7]]);
  assert.deepEqual(lines, [{ method: 'GET', route: 'GET /v1/listings', path: '/v1/listings', status: 200, durationMs: 7, keyId: 'key_1', requestId: context.requestId, client: '192.0.2.1' }]);
  assert.equal(charged.length, 1);
  assert.equal(charged[0]![0], 'key_1');
  assert.ok(observer.poolWorkCharge(context) !== null, "a compression's pool time is charged to the key");
});

test('a request without a key (a 401, or any other area): metrics and a log line, no usage, no charge', () => {
  const { observer, usage, metrics, lines, charged } = observed();
  for (const context of [keyContext(null), new KeylessContext(request('/health'), response, {} as Store)]) {
    const began = observer.workBegins();
    observer.workPauses(context, began);
    assert.equal(observer.poolWorkCharge(context), null);
    observer.finished(context, 401, observer.arrived());
  }
  assert.deepEqual(usage, []);
  assert.deepEqual(charged, []);
  assert.equal(metrics.length, 2);
  assert.deepEqual(lines.map((line) => [line.path, line.keyId, line.route]), [['/v1/listings', null, null], ['/health', null, null]]);
});

test('an unmatched route is counted for usage as "METHOD (unknown route)"', () => {
  const { observer, usage } = observed();
  observer.finished(keyContext('key_1'), 404, observer.arrived());
  assert.deepEqual(usage, [['key_1', 'GET (unknown route)', 404]]);
});

test('with no access log and no metrics the arrival is not timed; with no budget nothing is charged', () => {
  const { clock, observer, usage, charged } = observed({ accessLog: false, metrics: false, budget: false });
  clock.advance(1000);
  assert.equal(observer.arrived(), 0);
  assert.equal(observer.workBegins(), 0);
  const context = keyContext('key_1');
  observer.workPauses(context, 0);
  assert.equal(observer.poolWorkCharge(context), null);
  assert.equal(observer.cpuBudget, null);
  observer.finished(context, 200, 0);
  assert.deepEqual(usage, [['key_1', 'GET (unknown route)', 200]]);
  assert.deepEqual(charged, []);
});
