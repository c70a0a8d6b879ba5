// The key format: prefixes, entropy, hashing, and a checksum that refuses any single mistyped
// character before the key is ever looked up.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { generateApiKey, hashApiKey, isWellFormedApiKey, keyPrefix, randomBase62 } from '../../src/auth/keys.ts';
import { newId } from '../../src/domain/ids.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECKSUM_LENGTH = 6;

test('keys are <brand>_live_<body> or mk_<body>, the body base62', () => {
  const live = generateApiKey('live', 'market');
  assert.match(live.key, /^market_live_[0-9A-Za-z]{36}$/);
  assert.equal(live.prefix, 'market_live_');
  const short = generateApiKey('mk', 'market');
  assert.match(short.key, /^mk_[0-9A-Za-z]{36}$/);
  assert.equal(short.prefix, 'mk_');
  assert.equal(keyPrefix('live', 'acme'), 'acme_live_');
  assert.equal(keyPrefix('mk', 'acme'), 'mk_');
  for (const generated of [live, short]) {
    assert.equal(isWellFormedApiKey(generated.key, 'market'), true);
    assert.equal(generated.lastFour, generated.key.slice(-4));
  }
});

test('the random part of the body carries at least 128 bits of entropy', () => {
  const { key, prefix } = generateApiKey('live', 'market');
  const randomLength = key.length - prefix.length - CHECKSUM_LENGTH;
  assert.ok(randomLength * Math.log2(62) >= 128, `${randomLength} base62 characters = ${(randomLength * Math.log2(62)).toFixed(1)} bits`);

  // And the characters really are spread over the whole alphabet, evenly.
  const counts = new Map<string, number>();
  const keys = new Set<string>();
  const sample = 2_000;
  for (let index = 0; index < sample; index += 1) {
    const generated = generateApiKey('mk', 'market').key;
    keys.add(generated);
    for (const character of generated.slice(3, 3 + randomLength)) counts.set(character, (counts.get(character) ?? 0) + 1);
  }
  assert.equal(keys.size, sample, 'no repeats');
  assert.equal(counts.size, 62, 'every base62 character appears');
  const expected = (sample * randomLength) / 62;
  for (const [character, count] of counts) {
    // ±25% is about 8 standard deviations: a biased generator fails, a fair one never does.
    assert.ok(Math.abs(count - expected) < expected * 0.25, `${character} appeared ${count} times, expected about ${expected.toFixed(0)}`);
  }
  assert.equal(randomBase62(500).length, 500);
  assert.match(randomBase62(500), /^[0-9A-Za-z]+$/);
});

test('the store keeps the SHA-256 of the key, never the key', () => {
  const generated = generateApiKey('live', 'market');
  assert.equal(generated.hash, createHash('sha256').update(generated.key).digest('hex'));
  assert.equal(hashApiKey(generated.key), generated.hash);
});

test('every single mistyped character is refused as malformed', () => {
  for (const kind of ['live', 'mk'] as const) {
    for (let round = 0; round < 3; round += 1) {
      const { key, prefix } = generateApiKey(kind, 'market');
      for (let position = prefix.length; position < key.length; position += 1) {
        for (const replacement of BASE62) {
          if (replacement === key[position]) continue;
          const typo = key.slice(0, position) + replacement + key.slice(position + 1);
          assert.equal(isWellFormedApiKey(typo, 'market'), false, `${typo} (position ${position})`);
        }
      }
    }
  }
});

test('dropped, doubled, swapped or foreign characters, and other prefixes, are refused', async (t) => {
  const { key } = generateApiKey('live', 'market');
  const body = key.slice('market_live_'.length);
  const malformed = [
    key.slice(0, -1),
    key + 'A',
    key.slice(0, 20) + key.slice(21),
    key.slice(0, 20) + key[20] + key.slice(20),
    key.slice(0, 12) + body[1] + body[0] + body.slice(2), // adjacent swap (the first two differ almost always)
    key.slice(0, -3) + '-' + key.slice(-2),
    key.slice(0, -3) + 'é' + key.slice(-2),
    key.toUpperCase(),
    'Market_live_' + body,
    'market_test_' + body,
    'market-live-' + body,
    'market_live' + body,
    'MK_' + body,
    'mk' + body,
    'acme_live_' + body,
    body,
    '',
    'mk_',
    'market_live_',
    ` ${key}`,
  ];
  for (const candidate of malformed.filter((candidate) => candidate !== key)) {
    await t.test(JSON.stringify(candidate), async () => {
      assert.equal(isWellFormedApiKey(candidate, 'market'), false, JSON.stringify(candidate));
    });
  }
  // The same body is well formed under either prefix: the checksum covers the body only.
  assert.equal(isWellFormedApiKey('mk_' + body, 'market'), true);
});

test('MARKETPLACE_BRAND changes the long prefix; mk_ is accepted under any brand', () => {
  const acme = generateApiKey('live', 'acme');
  assert.match(acme.key, /^acme_live_[0-9A-Za-z]{36}$/);
  assert.equal(isWellFormedApiKey(acme.key, 'acme'), true);
  assert.equal(isWellFormedApiKey(acme.key, 'market'), false, 'another brand’s key is malformed here');
  const market = generateApiKey('live', 'market');
  assert.equal(isWellFormedApiKey(market.key, 'acme'), false);
  const short = generateApiKey('mk', 'acme');
  assert.equal(isWellFormedApiKey(short.key, 'market'), true);
  assert.equal(isWellFormedApiKey(short.key, 'acme'), true);
});

test('ids: a prefix and 20 base62 characters, no repeats and no bias over many thousands (their random bytes come from a shared pool)', () => {
  const sample = 20_000;
  const ids = new Set<string>();
  const counts = new Map<string, number>();
  for (let index = 0; index < sample; index++) {
    const id = newId('lst');
    assert.match(id, /^lst_[0-9A-Za-z]{20}$/);
    ids.add(id);
    for (const character of id.slice(4)) counts.set(character, (counts.get(character) ?? 0) + 1);
  }
  assert.equal(ids.size, sample, 'no repeats');
  const expected = (sample * 20) / 62;
  for (const [character, count] of counts) {
    // ±10% is about 9 standard deviations here: a pool handing out the same bytes twice, or a biased mapping, fails.
    assert.ok(Math.abs(count - expected) < expected * 0.1, `${character} appeared ${count} times, expected about ${expected.toFixed(0)}`);
  }
  assert.equal(counts.size, 62, 'every base62 character appears');
});
