// Field checks for request bodies. Each check records a per-field problem; the handler throws
// once with every problem listed in `details`, so a client fixes all of them in one go.
// Lengths count Unicode code points after trimming (as JSON Schema's maxLength does), so an
// emoji is one character, not two UTF-16 units.

import { readEmail } from '../domain/email.ts';
import { numberText } from './body.ts';
import { badRequest } from '../domain/errors.ts';
import { decimalPlaces } from './json-source.ts';

/** Characters as a person counts them (code points), not UTF-16 units. */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

/** Text with nothing to see: only control (Cc), format (Cf, e.g. U+200B) and separator or space characters. */
const INVISIBLE_ONLY = /^[\p{Cc}\p{Cf}\p{Z}\s]*$/u;

export class BodyChecker {
  readonly problems: Record<string, string> = {};
  private readonly body: Record<string, unknown>;

  constructor(body: Record<string, unknown>, allowedFields: readonly string[], readOnlyFields: readonly string[] = []) {
    this.body = body;
    for (const field of Object.keys(body)) {
      if (readOnlyFields.includes(field)) this.problems[field] = 'is read-only and cannot be set';
      else if (!allowedFields.includes(field)) this.problems[field] = `is not a known field (allowed: ${allowedFields.join(', ')})`;
    }
  }

  has(field: string): boolean {
    return Object.hasOwn(this.body, field);
  }

  requireFields(fields: readonly string[]): void {
    for (const field of fields) if (!this.has(field)) this.problems[field] = 'is required';
  }

  /** A string, trimmed, whose length lies in [min, max]; `undefined` when absent or bad. */
  string(field: string, min: number, max: number): string | undefined {
    if (!this.has(field)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'string') return this.fail(field, 'must be a string');
    const trimmed = value.trim();
    const length = codePointLength(trimmed);
    if (length < min) return this.fail(field, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
    if (length > max) return this.fail(field, `must be at most ${max} characters`);
    return trimmed;
  }

  /**
   * As string(), and it must show something: a text made only of invisible characters (format
   * and control characters such as U+200B or U+0083, and white space) is refused.
   */
  visibleString(field: string, min: number, max: number): string | undefined {
    const text = this.string(field, min, max);
    if (text === undefined || (min === 0 && text === '')) return text;
    return INVISIBLE_ONLY.test(text) ? this.fail(field, 'must have at least one visible character (not only invisible or control characters)') : text;
  }

  oneOf<T extends string>(field: string, allowed: readonly T[]): T | undefined {
    if (!this.has(field)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      return this.fail(field, `must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  }

  integer(field: string, min: number, max: number): number | undefined {
    if (!this.has(field)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.fail(field, `must be a whole number from ${min} to ${max}`);
    }
    return value;
  }

  /** An http(s) URL of at most `max` characters, or the empty string to clear it. */
  url(field: string, max: number): string | undefined {
    const value = this.string(field, 0, max);
    if (value === undefined || value === '') return value;
    try {
      const parsed = new URL(value);
      if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return value;
    } catch {
      // fall through
    }
    return this.fail(field, 'must be an http or https URL');
  }

  /** An address in its stored form (NFC, lower case; src/domain/email.ts), or the empty string to clear it. */
  email(field: string): string | undefined {
    const value = this.string(field, 0, 254);
    if (value === undefined || value === '') return value;
    const reading = readEmail(value);
    if ('problem' in reading) return this.fail(field, reading.problem);
    return reading.email;
  }

  stringList(field: string, maxItems: number, maxLength: number): string[] | undefined {
    if (!this.has(field)) return undefined;
    const value = this.body[field];
    if (!Array.isArray(value)) return this.fail(field, 'must be an array of strings');
    if (value.length > maxItems) return this.fail(field, `must have at most ${maxItems} items`);
    const items: string[] = [];
    for (const item of value) {
      if (typeof item !== 'string' || item.trim() === '' || codePointLength(item.trim()) > maxLength) {
        return this.fail(field, `must hold non-empty strings of at most ${maxLength} characters`);
      }
      items.push(item.trim());
    }
    return items;
  }

  value(field: string): unknown {
    return this.body[field];
  }

  /**
   * A number with at most `places` decimals as written in the body's text (9.99 yes; 9.999 and
   * 1.000000001 no, which a float comparison with a tolerance would let through).
   */
  decimalNumber(field: string, min: number, max: number, places: number): number | undefined {
    if (!this.has(field)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.fail(field, 'must be a number');
    if (value < min || value > max) return this.fail(field, `must be from ${min} to ${max}`);
    // A body built in code rather than parsed has no text: its shortest spelling stands in.
    const literal = numberText(this.body, field) ?? String(value);
    if (decimalPlaces(literal) > places) return this.fail(field, `must have at most ${places} decimals`);
    return value;
  }

  fail(field: string, problem: string): undefined {
    this.problems[field] ??= problem;
    return undefined;
  }

  /** Throws one 400 listing every problem found, if any. */
  finish(what = 'The request body'): void {
    const fields = Object.keys(this.problems);
    if (fields.length === 0) return;
    const summary = fields.map((field) => `${field} ${this.problems[field]}`).join('; ');
    throw badRequest(`${what} is invalid: ${summary}.`, this.problems);
  }
}

/** The fields that were given: a checker returns undefined for absent ones, which must not overwrite. */
export function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

export function requireNonEmpty(body: Record<string, unknown>, fields: readonly string[]): void {
  if (!fields.some((field) => Object.hasOwn(body, field))) {
    throw badRequest(`Send at least one of: ${fields.join(', ')}.`);
  }
}
