// The usage chart: where bars, 429 marks and axis labels go for a series, and the SVG it
// builds (through a minimal stand-in for document), all without a browser.

import assert from 'node:assert/strict';
import { test } from 'node:test';

interface Point { start: string; requests: number; rate_limited: number; errors: number }
interface Series { granularity: 'hour' | 'day'; from: string; to: string; points: Point[] }
interface Bar { start: number; requests: number; rateLimited: number; x: number; y: number; width: number; height: number; limitedY: number; limitedHeight: number }
interface Geometry {
  plot: { left: number; right: number; top: number; bottom: number };
  bars: Bar[];
  marks: Array<{ x: number; y: number; count: number }>;
  yTicks: Array<{ value: number; y: number }>;
  xTicks: Array<{ time: number; x: number; label: string }>;
  totals: { requests: number; rateLimited: number; errors: number };
  scaleMax: number;
}
interface ChartModule {
  niceScale(maxValue: number): { max: number; step: number };
  chartGeometry(series: Series, options?: { utc?: boolean }): Geometry;
  renderUsageChart(doc: FakeDocument, series: Series, options?: { utc?: boolean }): FakeElement;
}
interface UsageModule {
  usageQuery(hours: number, now: number): { granularity: string; from: string; to: string };
}

// The browser modules are plain JavaScript; loading them by URL keeps the type checker out of them.
const chart = (await import(new URL('../../src/dashboard/public/chart.js', import.meta.url).href)) as ChartModule;
const usage = (await import(new URL('../../src/dashboard/public/usage.js', import.meta.url).href)) as UsageModule;

class FakeElement {
  readonly namespace: string;
  readonly tag: string;
  readonly attributes = new Map<string, string>();
  readonly children: FakeElement[] = [];
  textContent = '';
  constructor(namespace: string, tag: string) {
    this.namespace = namespace;
    this.tag = tag;
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  appendChild(child: FakeElement): FakeElement {
    this.children.push(child);
    return child;
  }
  /** Every element below this one, depth first. */
  all(): FakeElement[] {
    return this.children.flatMap((child) => [child, ...child.all()]);
  }
  withClass(name: string): FakeElement[] {
    return this.all().filter((element) => (element.attributes.get('class') ?? '').split(' ').includes(name));
  }
}
class FakeDocument {
  createElementNS(namespace: string, tag: string): FakeElement {
    return new FakeElement(namespace, tag);
  }
}

const DAY = '2025-01-01'; // a Wednesday
const hour = (index: number) => new Date(Date.parse(`${DAY}T00:00:00Z`) + index * 3600000).toISOString();
const oneDay: Series = {
  granularity: 'hour',
  from: hour(0),
  to: hour(24),
  points: [
    { start: hour(0), requests: 10, rate_limited: 0, errors: 0 },
    { start: hour(5), requests: 40, rate_limited: 8, errors: 2 },
    { start: hour(23), requests: 20, rate_limited: 0, errors: 0 },
  ],
};

test('niceScale rounds the top of the axis up to a readable whole number', () => {
  assert.deepEqual(chart.niceScale(0), { max: 1, step: 1 });
  assert.deepEqual(chart.niceScale(3), { max: 3, step: 1 });
  assert.deepEqual(chart.niceScale(40), { max: 40, step: 10 });
  assert.deepEqual(chart.niceScale(137), { max: 150, step: 50 });
  assert.deepEqual(chart.niceScale(9001), { max: 10000, step: 5000 });
});

test('bars sit at their hour, scaled to the tallest, with the 429 share marked', () => {
  const geometry = chart.chartGeometry(oneDay, { utc: true });
  const { plot, bars } = geometry;
  const plotWidth = plot.right - plot.left;
  const plotHeight = plot.bottom - plot.top;
  assert.equal(bars.length, 3);
  assert.deepEqual(bars.map((bar) => bar.requests), [10, 40, 20]);
  // Each bar starts inside its own 1/24 slot of the width, in time order.
  bars.forEach((bar, index) => {
    const slot = [0, 5, 23][index]!;
    assert.ok(bar.x >= plot.left + (slot / 24) * plotWidth - 1e-9, `bar ${index} after its slot start`);
    assert.ok(bar.x + bar.width <= plot.left + ((slot + 1) / 24) * plotWidth + 1e-9, `bar ${index} inside its slot`);
  });
  assert.equal(geometry.scaleMax, 40);
  assert.equal(bars[1]!.height, plotHeight, 'the tallest bar fills the plot');
  assert.equal(bars[0]!.height, plotHeight / 4);
  assert.equal(bars[1]!.limitedHeight, plotHeight * (8 / 40));
  assert.equal(bars[1]!.limitedY, bars[1]!.y, 'the 429 part is at the top of its bar');
  assert.equal(geometry.marks.length, 1);
  assert.equal(geometry.marks[0]!.count, 8);
  assert.deepEqual(geometry.totals, { requests: 70, rateLimited: 8, errors: 2 });
  assert.deepEqual(geometry.yTicks.map((tick) => tick.value), [0, 10, 20, 30, 40]);
  assert.equal(geometry.yTicks[0]!.y, plot.bottom);
  assert.equal(geometry.yTicks.at(-1)!.y, plot.top);
});

test('a day is labelled every three hours, with the day name at midnight', () => {
  const { xTicks, plot } = chart.chartGeometry(oneDay, { utc: true });
  assert.deepEqual(xTicks.map((tick) => tick.label), ['Wed 1', '03:00', '06:00', '09:00', '12:00', '15:00', '18:00', '21:00', 'Thu 2']);
  assert.equal(xTicks[0]!.x, plot.left);
  assert.equal(xTicks.at(-1)!.x, plot.right);
});

test('a week is labelled once per day', () => {
  const week: Series = { granularity: 'hour', from: hour(0), to: hour(24 * 7), points: [] };
  const { xTicks } = chart.chartGeometry(week, { utc: true });
  assert.deepEqual(xTicks.map((tick) => tick.label), ['Wed 1', 'Thu 2', 'Fri 3', 'Sat 4', 'Sun 5', 'Mon 6', 'Tue 7', 'Wed 8']);
});

test('points outside the window or with a bad time are left out; zero-request hours draw nothing tall', () => {
  const series: Series = {
    ...oneDay,
    points: [
      { start: hour(-3), requests: 500, rate_limited: 0, errors: 0 },
      { start: 'not a date', requests: 500, rate_limited: 0, errors: 0 },
      { start: hour(2), requests: 0, rate_limited: 0, errors: 0 },
      { start: hour(4), requests: 6, rate_limited: 0, errors: 0 },
      { start: hour(30), requests: 500, rate_limited: 0, errors: 0 },
    ],
  };
  const geometry = chart.chartGeometry(series, { utc: true });
  assert.deepEqual(geometry.bars.map((bar) => bar.requests), [0, 6]);
  assert.equal(geometry.bars[0]!.height, 0);
  assert.equal(geometry.totals.requests, 6);
});

test('a sparse series and the same series with empty hours filled in draw the same bars', () => {
  const dense: Series = {
    ...oneDay,
    points: Array.from({ length: 24 }, (_, index) => oneDay.points.find((point) => point.start === hour(index)) ?? { start: hour(index), requests: 0, rate_limited: 0, errors: 0 }),
  };
  const sparseBars = chart.chartGeometry(oneDay, { utc: true }).bars;
  const denseBars = chart.chartGeometry(dense, { utc: true }).bars.filter((bar) => bar.requests > 0);
  assert.deepEqual(denseBars, sparseBars);
});

test('renderUsageChart builds an accessible SVG with one group per bar and a mark per 429 hour', () => {
  const svg = chart.renderUsageChart(new FakeDocument(), oneDay, { utc: true });
  assert.equal(svg.tag, 'svg');
  assert.equal(svg.namespace, 'http://www.w3.org/2000/svg');
  assert.ok(svg.all().every((element) => element.namespace === 'http://www.w3.org/2000/svg'));
  assert.equal(svg.attributes.get('role'), 'img');
  assert.match(svg.attributes.get('aria-label') ?? '', /70 requests, 8 rate-limited/);
  assert.equal(svg.attributes.get('data-total-requests'), '70');
  assert.equal(svg.attributes.get('data-bars'), '3');
  assert.equal(svg.withClass('bar').length, 3);
  assert.equal(svg.withClass('bar-requests').length, 3);
  assert.equal(svg.withClass('bar-limited').length, 1);
  assert.equal(svg.withClass('limit-mark').length, 1);
  const limited = svg.withClass('limited')[0]!;
  assert.equal(limited.attributes.get('data-start'), hour(5));
  const tooltip = limited.children.find((child) => child.tag === 'title')!;
  assert.equal(tooltip.textContent, '40 requests in the hour from 2025-01-01 05:00 UTC, 8 rate-limited (429), 2 errors');
  const labels = svg.all().filter((element) => element.tag === 'text').map((element) => element.textContent);
  assert.ok(labels.includes('12:00'));
  assert.ok(labels.includes('40'));
  assert.equal(svg.withClass('chart-empty').length, 0);
});

test('a dense series (every hour, as the server sends it) renders only the hours with traffic', () => {
  const dense: Series = {
    ...oneDay,
    points: Array.from({ length: 24 }, (_, index) => oneDay.points.find((point) => point.start === hour(index)) ?? { start: hour(index), requests: 0, rate_limited: 0, errors: 0 }),
  };
  const svg = chart.renderUsageChart(new FakeDocument(), dense, { utc: true });
  assert.equal(svg.attributes.get('data-bars'), '3');
  assert.equal(svg.withClass('bar').length, 3);
  assert.match(svg.attributes.get('aria-label') ?? '', /in 3 hours with traffic/);
  const empty = chart.renderUsageChart(new FakeDocument(), { ...dense, points: dense.points.map((point) => ({ ...point, requests: 0, rate_limited: 0 })) }, { utc: true });
  assert.equal(empty.withClass('bar').length, 0);
  assert.equal(empty.withClass('chart-empty')[0]?.textContent, 'No requests in this period');
});

test('an empty series says so inside the chart', () => {
  const svg = chart.renderUsageChart(new FakeDocument(), { ...oneDay, points: [] }, { utc: true });
  assert.equal(svg.withClass('bar').length, 0);
  assert.equal(svg.withClass('chart-empty')[0]?.textContent, 'No requests in this period');
});

test('the usage query asks for whole hours, the current hour included', () => {
  const now = Date.parse('2025-01-01T10:25:00Z');
  assert.deepEqual(usage.usageQuery(24, now), { granularity: 'hour', from: '2024-12-31T11:00:00.000Z', to: '2025-01-01T11:00:00.000Z' });
  assert.deepEqual(usage.usageQuery(168, now), { granularity: 'hour', from: '2024-12-25T11:00:00.000Z', to: '2025-01-01T11:00:00.000Z' });
});
