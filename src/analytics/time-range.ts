// Reads the time range of an analytics query (`granularity`, `from`, `to`) into whole UTC
// buckets, with defaults and limits; anything malformed is a 400 that says what to send.

import { badRequest } from '../domain/errors.ts';
import { bucketMsOf, ceilTo, DAY_MS, floorTo, GRANULARITIES, HOUR_MS, type Granularity } from './buckets.ts';
import type { HourSpan, SeriesRange } from './reader.ts';

/** Without `from`, a series covers this much before `to`. */
export const DEFAULT_SPAN_MS: Readonly<Record<Granularity, number>> = { hour: DAY_MS, day: 30 * DAY_MS };
/** The widest range one request may ask for (it bounds the points in the answer). */
export const MAX_SPAN_MS: Readonly<Record<Granularity, number>> = { hour: 31 * DAY_MS, day: 366 * DAY_MS };

/** What `from` and `to` accept: a date, or a time with Z or an offset (seconds and fractions optional). The OpenAPI document uses it as the parameters' pattern. */
export const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2})))?$/;
const EXAMPLE = '2026-01-01T00:00:00Z';

/**
 * The series range of a usage query, `from` rounded down and `to` rounded up to whole buckets.
 * @example readSeriesRange(new URLSearchParams('granularity=day'), now) // the last 30 days, today included
 */
export function readSeriesRange(query: URLSearchParams, nowMs: number): SeriesRange {
  const granularityText = query.get('granularity') ?? 'hour';
  if (!(GRANULARITIES as readonly string[]).includes(granularityText)) {
    throw badRequest(`Query parameter "granularity" must be one of: ${GRANULARITIES.join(', ')}.`, { granularity: `must be one of ${GRANULARITIES.join(', ')}` });
  }
  const granularity = granularityText as Granularity;
  const sizeMs = bucketMsOf(granularity);
  const givenFrom = readTime(query, 'from');
  const givenTo = readTime(query, 'to');
  // By default the range ends with the current bucket, so the latest requests are in it.
  const to = givenTo ?? floorTo(nowMs, sizeMs) + sizeMs;
  const from = givenFrom ?? ceilTo(to, sizeMs) - DEFAULT_SPAN_MS[granularity];
  checkOrder(from, to);
  if (to - from > MAX_SPAN_MS[granularity]) {
    const days = MAX_SPAN_MS[granularity] / DAY_MS;
    throw badRequest(`The range from "from" to "to" may span at most ${days} days with granularity=${granularity}.`, {
      to: `at most ${days} days after from`,
    });
  }
  return { granularity, fromMs: floorTo(from, sizeMs), toMs: ceilTo(to, sizeMs) };
}

/** An optional range of whole hours (`from` rounded down, `to` rounded up); open ends are null. */
export function readHourSpan(query: URLSearchParams): HourSpan {
  const from = readTime(query, 'from');
  const to = readTime(query, 'to');
  if (from !== null && to !== null) checkOrder(from, to);
  return { fromMs: from === null ? null : floorTo(from, HOUR_MS), toMs: to === null ? null : ceilTo(to, HOUR_MS) };
}

function checkOrder(from: number, to: number): void {
  if (from >= to) throw badRequest('Query parameter "from" must be earlier than "to".', { from: 'must be earlier than to' });
}

/** Wall ms of an ISO 8601 date or date-time parameter; a time needs "Z" or an offset. */
function readTime(query: URLSearchParams, name: string): number | null {
  const raw = query.get(name);
  if (raw === null) return null;
  // An unencoded "+" in a query string arrives as a space: "…T10:00:00 02:00" meant "+02:00".
  const text = raw.trim().replace(/ (\d{2}:\d{2})$/, '+$1');
  const ms = isCalendarTime(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) {
    throw badRequest(`Query parameter "${name}" must be an ISO 8601 UTC time such as ${EXAMPLE} (or a date such as 2026-01-01).`, {
      [name]: 'must be an ISO 8601 time with Z or an offset, or a date',
    });
  }
  return ms;
}

function isCalendarTime(text: string): boolean {
  const match = ISO_TIME.exec(text);
  if (!match) return false;
  const [, year, month, day, hours = '00', minutes = '00', seconds = '00', , offsetHours = '00', offsetMinutes = '00'] = match;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  return (
    Number(month) >= 1 &&
    Number(month) <= 12 &&
    Number(day) >= 1 &&
    Number(day) <= daysInMonth &&
    Number(hours) <= 23 &&
    Number(minutes) <= 59 &&
    Number(seconds) <= 59 &&
    Number(offsetHours) <= 23 &&
    Number(offsetMinutes) <= 59
  );
}
