// What JSON.parse forgets about a request body, recovered from its text: the exact literal of
// each top-level number (so a price is judged on the decimals the client wrote, never on a
// float approximation), and whether a field name would reach JavaScript's object machinery.

/** Own keys that could reach a prototype if a body were ever merged into an object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first forbidden field name at any depth of a parsed body, or undefined. */
export function forbiddenKeyIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const nested = forbiddenKeyIn(child);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

// Strings (with escapes), numbers and the punctuation that sets the depth; nothing else matters.
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]/g;

/**
 * The literal text of every number that is a direct member of the top-level object, by field
 * (the last one wins, as in JSON.parse). Only for text JSON.parse has already accepted.
 * @example topLevelNumberTexts('{"price":1.000000001}').get('price') // '1.000000001'
 */
export function topLevelNumberTexts(text: string): Map<string, string> {
  const texts = new Map<string, string>();
  let depth = 0;
  let key: string | undefined;
  let afterColon = false;
  for (const [token] of text.matchAll(TOKEN)) {
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

/**
 * The decimal places a number literal needs, exponent included, trailing zeros not counted.
 * @example decimalPlaces('9.990') // 2
 * @example decimalPlaces('999e-2') // 2
 */
export function decimalPlaces(literal: string): number {
  const [mantissa = '', exponent = '0'] = literal.toLowerCase().split('e');
  const fraction = (mantissa.split('.')[1] ?? '').replace(/0+$/, '');
  return Math.max(0, fraction.length - Number(exponent));
}
