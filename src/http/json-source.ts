// What JSON.parse forgets about a request body, recovered from its text: the exact literal of
// each top-level number (so a price is judged on the decimals the client wrote, never on a
// float approximation), and whether the parsed value is one the server may keep: not nested
// past a bound, no field name that would reach JavaScript's object machinery, no text a
// back-end would refuse or alter.

/** Own keys that could reach a prototype if a body were ever merged into an object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Deeper than any body a route takes (the deepest is an array inside the top object): refused, never walked. */
export const MAX_BODY_DEPTH = 32;

/** What makes a parsed body unacceptable whatever the route: the first one found. */
export type BodyProblem =
  | { kind: 'too-deep' }
  | { kind: 'forbidden-key'; key: string }
  /** A string or field name holding U+0000 or an unpaired surrogate, under top-level `field`. */
  | { kind: 'bad-text'; field: string };

/**
 * The first problem of a parsed body at any depth, or undefined: nesting deeper than
 * MAX_BODY_DEPTH, a field named __proto__, constructor or prototype, or text no back-end can
 * store alike (U+0000, which PostgreSQL's text and json refuse, and unpaired UTF-16 surrogates,
 * which are no characters at all). Walked with its own stack, not by recursion: a body of
 * 64 KiB can nest 30,000 levels, past what the call stack holds.
 */
export function bodyProblem(value: unknown): BodyProblem | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Array<{ value: object; depth: number; field: string }> = [{ value, depth: 1, field: '' }];
  while (stack.length > 0) {
    const { value: container, depth, field: topField } = stack.pop()!;
    if (depth > MAX_BODY_DEPTH) return { kind: 'too-deep' };
    // Own keys one by one (Object.entries made an array per key of every body: 2.6% of a create's allocations).
    const record = container as Record<string, unknown>;
    const isArray = Array.isArray(container);
    for (const key of Object.keys(record)) {
      if (!isArray) {
        if (FORBIDDEN_KEYS.has(key)) return { kind: 'forbidden-key', key };
        if (!isStorableText(key)) return { kind: 'bad-text', field: depth === 1 ? '' : topField };
      }
      const field = depth === 1 ? key : topField;
      const child = record[key];
      if (typeof child === 'string') {
        if (!isStorableText(child)) return { kind: 'bad-text', field };
      } else if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1, field });
    }
  }
  return undefined;
}

/**
 * U+0000 or a surrogate standing alone: with the u flag a well-formed pair is one code point,
 * so only an unpaired half matches the surrogate range.
 */
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** Text every back-end stores as it is: no U+0000 and no unpaired surrogate. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
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
