// What JSON.parse forgets about a request body, recovered from its text: the exact literal of
// each top-level number (so a price is judged on the decimals the client wrote, never on a
// float approximation), and whether a field name would reach JavaScript's object machinery.

/** Own keys that could reach a prototype if a body were ever merged into an object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first forbidden field name at any depth of a parsed body, or undefined. */
export function forbiddenKeyIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  // Own keys one by one (Object.entries made an array per key of every body: 2.6% of a create's allocations).
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const child = record[key];
    if (typeof child !== 'object' || child === null) continue;
    const nested = forbiddenKeyIn(child);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Characters that continue a number literal once it has started (digits, ".", "e", "E", "+", "-"). */
function continuesNumber(code: number): boolean {
  return (code >= ZERO && code <= NINE) || code === 0x2e || code === 0x65 || code === 0x45 || code === 0x2b || code === MINUS;
}

/**
 * The literal text of every number that is a direct member of the top-level object, by field
 * (the last one wins, as in JSON.parse). Only for text JSON.parse has already accepted, so a
 * scan that tells strings, numbers and the punctuation setting the depth apart is enough
 * (written as a loop over character codes: a regular expression's match per token was 2% of a
 * listing create).
 * @example topLevelNumberTexts('{"price":1.000000001}').get('price') // '1.000000001'
 */
export function topLevelNumberTexts(text: string): Map<string, string> {
  const texts = new Map<string, string>();
  let depth = 0;
  let key: string | undefined;
  let afterColon = false;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const start = index;
      let escaped = false;
      index += 1;
      while (index < text.length) {
        const inner = text.charCodeAt(index);
        if (inner === QUOTE) break;
        if (inner === BACKSLASH) {
          escaped = true;
          index += 1;
        }
        index += 1;
      }
      index += 1;
      if (depth === 1 && !afterColon) key = escaped ? (JSON.parse(text.slice(start, index)) as string) : text.slice(start + 1, index - 1);
      afterColon = false;
      continue;
    }
    if (code === MINUS || (code >= ZERO && code <= NINE)) {
      const start = index;
      index += 1;
      while (index < text.length && continuesNumber(text.charCodeAt(index))) index += 1;
      if (depth === 1 && afterColon && key !== undefined) texts.set(key, text.slice(start, index));
      afterColon = false;
      continue;
    }
    index += 1;
    if (code === 0x7b || code === 0x5b) {
      depth += 1;
      afterColon = false;
    } else if (code === 0x7d || code === 0x5d) {
      depth -= 1;
      afterColon = false;
    } else if (code === 0x3a) afterColon = depth === 1 && key !== undefined;
    else if (code === 0x2c) {
      key = undefined;
      afterColon = false;
    }
    // Anything else (white space, true, false, null) changes nothing.
  }
  return texts;
}

/**
 * The decimal places a number literal needs, exponent included, trailing zeros not counted.
 * @example decimalPlaces('9.990') // 2
 * @example decimalPlaces('999e-2') // 2
 */
export function decimalPlaces(literal: string): number {
  let exponentAt = literal.indexOf('e');
  if (exponentAt === -1) exponentAt = literal.indexOf('E');
  const mantissaEnd = exponentAt === -1 ? literal.length : exponentAt;
  const exponent = exponentAt === -1 ? 0 : Number(literal.slice(exponentAt + 1));
  const dot = literal.indexOf('.');
  if (dot === -1 || dot > mantissaEnd) return Math.max(0, -exponent);
  let fractionEnd = mantissaEnd;
  while (fractionEnd > dot + 1 && literal.charCodeAt(fractionEnd - 1) === ZERO) fractionEnd -= 1;
  return Math.max(0, fractionEnd - dot - 1 - exponent);
}
