// The dispatcher's rules for what one attempt's result means, as a table: one subtest per case,
// named after the result and the attempt it came on.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideAttempt } from '../../src/webhooks/outcome-rules.ts';
import type { AttemptDecision } from '../../src/webhooks/outcome-rules.ts';
import type { SendOutcome } from '../../src/webhooks/send.ts';

const RULES = { retryDelaysMs: [5_000, 300_000], maxRetryAfterMs: 86_400_000 };

function answered(status: number, retryAfterMs?: number): SendOutcome {
  return { delivered: status >= 200 && status < 300, status, gone: status === 410, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function unanswered(error: string): SendOutcome {
  return { delivered: false, status: null, error, gone: false };
}

const CASES: { name: string; outcome: SendOutcome; attempt: number; decision: AttemptDecision }[] = [
  { name: '200 on the first attempt → delivered', outcome: answered(200), attempt: 1, decision: { kind: 'delivered' } },
  { name: '204 → delivered', outcome: answered(204), attempt: 1, decision: { kind: 'delivered' } },
  { name: '299 → delivered', outcome: answered(299), attempt: 2, decision: { kind: 'delivered' } },
  { name: '200 on the last attempt → delivered', outcome: answered(200), attempt: 3, decision: { kind: 'delivered' } },
  { name: '301 → retry (redirects are a failure)', outcome: answered(301), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '302 → retry', outcome: answered(302), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '307 on the last attempt → failed', outcome: answered(307), attempt: 3, decision: { kind: 'failed' } },
  { name: '308 on the second attempt → retry after the second delay', outcome: answered(308), attempt: 2, decision: { kind: 'retry', delayMs: 300_000 } },
  { name: '199 → retry (not a 2xx)', outcome: answered(199), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '300 → retry (not a 2xx)', outcome: answered(300), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '400 → retry', outcome: answered(400), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '404 on the last attempt → failed', outcome: answered(404), attempt: 3, decision: { kind: 'failed' } },
  { name: '410 → deactivate', outcome: answered(410), attempt: 1, decision: { kind: 'deactivate' } },
  { name: '410 on the last attempt → deactivate', outcome: answered(410), attempt: 3, decision: { kind: 'deactivate' } },
  { name: '500 → retry', outcome: answered(500), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '503 with a longer Retry-After → retry after it', outcome: answered(503, 60_000), attempt: 1, decision: { kind: 'retry', delayMs: 60_000 } },
  { name: '429 with a shorter Retry-After → the scheduled delay', outcome: answered(429, 1_000), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: '503 with a Retry-After of a week → capped at a day', outcome: answered(503, 7 * 86_400_000), attempt: 1, decision: { kind: 'retry', delayMs: 86_400_000 } },
  { name: '503 with Retry-After on the last attempt → failed', outcome: answered(503, 60_000), attempt: 3, decision: { kind: 'failed' } },
  { name: 'timeout → retry', outcome: unanswered('timeout'), attempt: 1, decision: { kind: 'retry', delayMs: 5_000 } },
  { name: 'ECONNREFUSED on the last attempt → failed', outcome: unanswered('ECONNREFUSED'), attempt: 3, decision: { kind: 'failed' } },
  { name: 'address not allowed → retry', outcome: unanswered('address not allowed'), attempt: 2, decision: { kind: 'retry', delayMs: 300_000 } },
];

for (const { name, outcome, attempt, decision } of CASES) {
  test(name, () => {
    assert.deepEqual(decideAttempt(outcome, attempt, RULES), decision);
  });
}

test('no retries configured: the first failure is final', () => {
  assert.deepEqual(decideAttempt(answered(500), 1, { retryDelaysMs: [], maxRetryAfterMs: 0 }), { kind: 'failed' });
});
