// The number literals of a request body, as the price check reads them: the fast scan must
// find exactly what a straightforward tokenizer finds, on bodies with nesting, escapes, repeated
// fields and every number form JSON allows; and decimal places are counted on the literal.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimalPlaces, topLevelNumberTexts } from '../../src/http/json-source.ts';

/** The plain tokenizer the scan must agree with: strings, numbers and punctuation by regular expression. */
function referenceNumberTexts(text: string): Map<string, string> {
  const texts = new Map<string, string>();
  let depth = 0;
  let key: string | undefined;
  let afterColon = false;
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]/g)) {
    if (token === '{' || token === '[') depth += 1;
    else if (token === '}' || token === ']') depth -= 1;
    else if (token === ':') {
      afterColon = depth === 1 && key !== undefined;
      continue;
    } else if (token === ',') key = undefined;
    else if (depth === 1 && token.startsWith('"')) {
      if (!afterColon) key = JSON.parse(token) as string;
    } else if (depth === 1 && afterColon && key !== undefined) texts.set(key, token);
    afterColon = false;
  }
  return texts;
}

function referenceDecimalPlaces(literal: string): number {
  const [mantissa = '', exponent = '0'] = literal.toLowerCase().split('e');
  const fraction = (mantissa.split('.')[1] ?? '').replace(/0+$/, '');
  return Math.max(0, fraction.length - Number(exponent));
}

/** A small deterministic generator, so a failure names a body that can be replayed. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

const NUMBERS = ['0', '-0', '7', '-12', '9.99', '9.990', '1.000000001', '999e-2', '1E3', '1e+2', '-3.5E-4', '0.10', '123456789012345678901234567890'];
const KEYS = ['price', 'title', 'a\\"b', 'back\\\\slash', 'é', '\\u0070rice', '', 'tags', 'price'];
const STRINGS = ['"x"', '"\\"price\\": 1.999"', '"\\\\"', '"a\\nb"', '"😀"', '"9.999"', '"{[:,]}"'];

function value(random: () => number, depth: number): string {
  const pick = random();
  if (depth < 3 && pick < 0.15) return `[${Array.from({ length: Math.floor(random() * 4) }, () => value(random, depth + 1)).join(random() < 0.5 ? ',' : ' , ')}]`;
  if (depth < 3 && pick < 0.3) return object(random, depth + 1);
  if (pick < 0.6) return NUMBERS[Math.floor(random() * NUMBERS.length)]!;
  if (pick < 0.85) return STRINGS[Math.floor(random() * STRINGS.length)]!;
  return ['true', 'false', 'null'][Math.floor(random() * 3)]!;
}

function object(random: () => number, depth: number): string {
  const members = Array.from({ length: Math.floor(random() * 6) }, () => `"${KEYS[Math.floor(random() * KEYS.length)]}"${random() < 0.3 ? ' : ' : ':'}${value(random, depth)}`);
  return `{${members.join(random() < 0.5 ? ',' : ',\n ')}}`;
}

test('the scan finds the same top-level number literals as a plain tokenizer, on 5,000 generated bodies', () => {
  const random = generator(21);
  let withNumbers = 0;
  for (let round = 0; round < 5000; round++) {
    const text = object(random, 1);
    JSON.parse(text); // only text JSON.parse accepts reaches the scan
    const expected = referenceNumberTexts(text);
    assert.deepEqual(topLevelNumberTexts(text), expected, text);
    if (expected.size > 0) withNumbers += 1;
  }
  assert.ok(withNumbers > 1000, `enough bodies had top-level numbers (${withNumbers})`);
});

test('a price is read as written: nested and quoted look-alikes do not count, the last one wins', () => {
  assert.deepEqual(topLevelNumberTexts('{"price":9.990000000000000001}'), new Map([['price', '9.990000000000000001']]));
  assert.deepEqual(topLevelNumberTexts('{"d":"\\"price\\": 1.999","n":{"price":3.333},"price":0.10}'), new Map([['price', '0.10']]));
  assert.deepEqual(topLevelNumberTexts('{"price":1,"price":2.50}'), new Map([['price', '2.50']]));
  assert.deepEqual(topLevelNumberTexts('{"\\u0070rice":1.005}'), new Map([['price', '1.005']]));
});

test('decimal places count the literal, exponent included, trailing zeros not', async (t) => {
  for (const literal of [...NUMBERS, '5e-2', '50E-3', '1.50e1', '1.0', '100', '0.000', '2.5e+0', '12.3400e-1']) {
    await t.test(literal, async () => {
      assert.equal(decimalPlaces(literal), referenceDecimalPlaces(literal), literal);
    });
  }
  assert.equal(decimalPlaces('9.990'), 2);
  assert.equal(decimalPlaces('999e-2'), 2);
  assert.equal(decimalPlaces('9.990000000000000001'), 18);
});
