// Reading granularity/from/to into whole UTC buckets: defaults around "now", rounding out,
// dates and offsets, and the 400s for anything else.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readHourSpan, readSeriesRange } from '../../src/analytics/time-range.ts';
import { HttpError } from '../../src/domain/errors.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const series = (query: string, now: string) => {
  const range = readSeriesRange(new URLSearchParams(query), Date.parse(now));
  return [range.granularity, iso(range.fromMs), iso(range.toMs)];
};

test('defaults end with the current bucket, even exactly on its first instant', () => {
  assert.deepEqual(series('', '2026-01-01T10:00:00Z'), ['hour', '2025-12-31T11:00:00.000Z', '2026-01-01T11:00:00.000Z']);
  assert.deepEqual(series('', '2026-01-01T10:59:59.999Z'), ['hour', '2025-12-31T11:00:00.000Z', '2026-01-01T11:00:00.000Z']);
  assert.deepEqual(series('granularity=day', '2026-03-01T00:00:00Z'), ['day', '2026-01-31T00:00:00.000Z', '2026-03-02T00:00:00.000Z']);
});

test('one end given: the other is the default span away; both are rounded out to whole buckets', () => {
  const now = '2026-01-10T10:30:00Z';
  assert.deepEqual(series('to=2026-01-05T07:20:00Z', now), ['hour', '2026-01-04T08:00:00.000Z', '2026-01-05T08:00:00.000Z']);
  assert.deepEqual(series('from=2026-01-10T03:45:00Z', now), ['hour', '2026-01-10T03:00:00.000Z', '2026-01-10T11:00:00.000Z']);
  assert.deepEqual(series('granularity=day&from=2026-01-01T12:00:00Z&to=2026-01-03T00:00:01Z', now), ['day', '2026-01-01T00:00:00.000Z', '2026-01-04T00:00:00.000Z']);
});

test('dates, offsets and fractions are understood; a time without a zone is not', async (t) => {
  const now = '2026-01-10T10:30:00Z';
  assert.deepEqual(series('from=2026-01-01&to=2026-01-02', now), ['hour', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z']);
  assert.deepEqual(series('from=2026-01-01T05:00:00.123456-03:30&to=2026-01-02T00:00Z', now), ['hour', '2026-01-01T08:00:00.000Z', '2026-01-02T00:00:00.000Z']);
  for (const bad of ['2026-01-01T05:00:00', '2026-1-1', '2026-02-29', '2026-01-01T24:00:00Z', '1767225600', '']) {
    await t.test(`from=${JSON.stringify(bad)} → 400`, () => {
      assert.throws(() => readSeriesRange(new URLSearchParams({ from: bad }), Date.parse(now)), (error: unknown) => error instanceof HttpError && error.status === 400, bad);
    });
  }
});

test('the widest range is 31 days by hour and 366 days by day', () => {
  const now = '2026-06-01T00:00:00Z';
  assert.equal(series('from=2026-01-01&to=2026-02-01', now)[2], '2026-02-01T00:00:00.000Z');
  assert.throws(() => series('from=2026-01-01&to=2026-02-01T00:00:01Z', now), /31 days/);
  assert.equal(series('granularity=day&from=2025-01-01&to=2026-01-02', now)[2], '2026-01-02T00:00:00.000Z');
  assert.throws(() => series('granularity=day&from=2025-01-01&to=2026-01-03', now), /366 days/);
});

test('an hour span may be open at either end', () => {
  const span = (query: string) => {
    const { fromMs, toMs } = readHourSpan(new URLSearchParams(query));
    return [iso(fromMs), iso(toMs)];
  };
  assert.deepEqual(span(''), [null, null]);
  assert.deepEqual(span('from=2026-01-01T10:30:00Z'), ['2026-01-01T10:00:00.000Z', null]);
  assert.deepEqual(span('to=2026-01-01T10:30:00Z'), [null, '2026-01-01T11:00:00.000Z']);
  assert.throws(() => span('from=2026-01-02&to=2026-01-01'), /earlier/);
});
