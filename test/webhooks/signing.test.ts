// Standard Webhooks signing: the specification's published vector, and verification refusing
// anything tampered with or stale.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDeliveryHeaders,
  generateWebhookSecret,
  signPayload,
} from '../../src/webhooks/signing.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';

// The vector from standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts
// ("sign function works"); the same value appears in the other language libraries' tests.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function vectorHeaders(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    'webhook-id': VECTOR.messageId,
    'webhook-timestamp': String(VECTOR.timestamp),
    'webhook-signature': VECTOR.signature,
    ...overrides,
  };
}

test('signPayload reproduces the Standard Webhooks test vector', () => {
  assert.equal(signPayload(VECTOR.secret, VECTOR.messageId, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
  assert.equal(
    signPayload(VECTOR.secret, VECTOR.messageId, VECTOR.timestamp, Buffer.from(VECTOR.body)),
    VECTOR.signature,
    'a Buffer body signs the same as its text',
  );
});

test('verifySignature accepts the vector at its own time and within tolerance', () => {
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp), true);
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp + 300), true);
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp - 300), true);
});

test('verifySignature refuses a tampered body, timestamp or id', () => {
  const now = VECTOR.timestamp;
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), '{"test": 2432232315}', now), false);
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), `${VECTOR.body} `, now), false);
  assert.equal(
    verifySignature(VECTOR.secret, vectorHeaders({ 'webhook-timestamp': String(VECTOR.timestamp + 1) }), VECTOR.body, now),
    false,
  );
  assert.equal(
    verifySignature(VECTOR.secret, vectorHeaders({ 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJel' }), VECTOR.body, now),
    false,
  );
});

test('verifySignature refuses a stale or far-future timestamp', () => {
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp + 301), false);
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp - 301), false);
  assert.equal(verifySignature(VECTOR.secret, vectorHeaders(), VECTOR.body, VECTOR.timestamp + 60, 30), false);
});

test('verifySignature refuses another secret, a missing header or a malformed signature', async (t) => {
  const now = VECTOR.timestamp;
  assert.equal(verifySignature(generateWebhookSecret(), vectorHeaders(), VECTOR.body, now), false);
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    await t.test(`without ${name}`, async () => {
      const headers: Record<string, string> = vectorHeaders();
      delete headers[name];
      assert.equal(verifySignature(VECTOR.secret, headers, VECTOR.body, now), false, `without ${name}`);
    });
  }
  for (const signature of ['', 'v1,', 'v1,abc', VECTOR.signature.slice(0, 20), VECTOR.signature.replace('v1,', 'v2,')]) {
    await t.test(`signature ${JSON.stringify(signature)}`, async () => {
      assert.equal(
        verifySignature(VECTOR.secret, vectorHeaders({ 'webhook-signature': signature }), VECTOR.body, now),
        false,
        `signature ${JSON.stringify(signature)}`,
      );
    });
  }
  assert.equal(
    verifySignature(VECTOR.secret, vectorHeaders({ 'webhook-timestamp': 'hello' }), VECTOR.body, now),
    false,
  );
});

test('verifySignature accepts a space-separated list holding one good signature', () => {
  const list = ['v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=', 'v2,anything', VECTOR.signature].join(' ');
  assert.equal(
    verifySignature(VECTOR.secret, vectorHeaders({ 'webhook-signature': list }), VECTOR.body, VECTOR.timestamp),
    true,
  );
});

test('generateWebhookSecret gives whsec_ + base64 of 32 fresh random bytes', () => {
  const first = generateWebhookSecret();
  const second = generateWebhookSecret();
  assert.match(first, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(first.slice(6), 'base64').length, 32);
  assert.notEqual(first, second);
});

test('buildDeliveryHeaders carries a signature that verifies, and the fixed headers', () => {
  const secret = generateWebhookSecret();
  const body = Buffer.from('{"id":"evt_1","type":"ping"}');
  const headers = buildDeliveryHeaders(secret, 'evt_1', 1767225600, body);
  assert.deepEqual(Object.keys(headers).sort(), [
    'content-type',
    'user-agent',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
  ]);
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(headers['user-agent'], 'marketplace-api-webhooks/1');
  assert.equal(headers['webhook-id'], 'evt_1');
  assert.equal(headers['webhook-timestamp'], '1767225600');
  assert.equal(verifySignature(secret, headers, body, 1767225600), true);
});
