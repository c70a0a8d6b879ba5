// The usage chart: requests per time bucket as bars, with rate-limited (429) requests marked.
// chartGeometry turns a usage series into numbers (pure); renderUsageChart turns those numbers
// into SVG elements through a document passed in, so both run in Node tests without a browser.

const SVG_NS = 'http://www.w3.org/2000/svg';
const HOUR_MS = 3600000;
const DAY_MS = 86400000;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

export const DEFAULT_SIZE = Object.freeze({ width: 880, height: 260, top: 16, right: 16, bottom: 34, left: 52 });

/** The smallest "nice" axis maximum (1, 2 or 5 times a power of ten, times the tick count) ≥ value. */
export function niceScale(maxValue, tickCount = 4) {
  const target = Math.max(1, maxValue) / tickCount;
  const magnitude = 10 ** Math.floor(Math.log10(target));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= target) ?? 10 * magnitude;
  // Requests are whole numbers, so a fractional step would only repeat labels.
  const wholeStep = Math.max(1, Math.ceil(step));
  const top = wholeStep * Math.ceil(Math.max(1, maxValue) / wholeStep);
  return { max: top, step: wholeStep };
}

function parts(ms, utc) {
  const date = new Date(ms);
  return utc
    ? { hours: date.getUTCHours(), minutes: date.getUTCMinutes(), day: date.getUTCDay(), date: date.getUTCDate() }
    : { hours: date.getHours(), minutes: date.getMinutes(), day: date.getDay(), date: date.getDate() };
}

function tickLabel(ms, longSpan, utc) {
  const { hours, day, date } = parts(ms, utc);
  if (longSpan || hours === 0) return `${WEEKDAYS[day]} ${date}`;
  return `${String(hours).padStart(2, '0')}:00`;
}

/**
 * Hours between two axis labels: every 3 hours (a day) or every day (a week) when the box is wide
 * enough, else the smallest wider step whose labels cannot touch. `unitWidth` is the width of one
 * hour (a day) or one day (a week); a label is at most LABEL_WIDTH px, "Mon 27" at 11 px included.
 */
const LABEL_WIDTH = 44;
function labelStepHours(longSpan, unitWidth) {
  const steps = longSpan ? [24, 48, 72, 168] : [3, 6, 12, 24];
  const unitHours = longSpan ? 24 : 1;
  return steps.find((hours) => (hours / unitHours) * unitWidth >= LABEL_WIDTH) ?? steps[steps.length - 1];
}

/**
 * Positions for every bar, mark and axis label of a usage series inside a box of `size`.
 * Points are placed by time between series.from and series.to, so a sparse series (hours with
 * no requests left out) and a dense one draw the same. Set `utc` to label axes in UTC.
 * @example chartGeometry({ granularity: 'hour', from, to, points: [{ start, requests: 3, rate_limited: 1, errors: 0 }] })
 */
export function chartGeometry(series, options = {}) {
  const size = { ...DEFAULT_SIZE, ...(options.size ?? {}) };
  const utc = options.utc === true;
  const bucketMs = series.granularity === 'day' ? DAY_MS : HOUR_MS;
  const points = (series.points ?? [])
    .map((point) => ({
      start: Date.parse(point.start),
      requests: Math.max(0, Number(point.requests) || 0),
      rateLimited: Math.max(0, Number(point.rate_limited) || 0),
      errors: Math.max(0, Number(point.errors) || 0),
    }))
    .filter((point) => Number.isFinite(point.start))
    .sort((left, right) => left.start - right.start);

  let from = Date.parse(series.from);
  let to = Date.parse(series.to);
  if (!Number.isFinite(from)) from = points.length > 0 ? points[0].start : Date.now() - DAY_MS;
  if (!Number.isFinite(to)) to = points.length > 0 ? points[points.length - 1].start + bucketMs : from + DAY_MS;
  if (to <= from) to = from + bucketMs;

  const plot = { left: size.left, right: size.width - size.right, top: size.top, bottom: size.height - size.bottom };
  const plotWidth = plot.right - plot.left;
  const plotHeight = plot.bottom - plot.top;
  const xOf = (ms) => plot.left + ((ms - from) / (to - from)) * plotWidth;

  // A bucket never spans more than its share of the window; bars keep a small gap between them.
  const slotWidth = (Math.min(bucketMs, to - from) / (to - from)) * plotWidth;
  const barWidth = Math.max(1, slotWidth * 0.8);

  const visible = points.filter((point) => point.start + bucketMs > from && point.start < to);
  const peak = visible.reduce((highest, point) => Math.max(highest, point.requests, point.rateLimited), 0);
  const scale = niceScale(peak);
  const yOf = (value) => plot.bottom - (value / scale.max) * plotHeight;

  const bars = visible.map((point) => {
    const total = Math.max(point.requests, point.rateLimited);
    const x = Math.max(plot.left, xOf(point.start) + (slotWidth - barWidth) / 2);
    const y = yOf(total);
    const limitedHeight = plot.bottom - yOf(Math.min(point.rateLimited, total));
    return {
      start: point.start,
      end: point.start + bucketMs,
      requests: point.requests,
      rateLimited: point.rateLimited,
      errors: point.errors,
      x,
      y,
      width: Math.min(barWidth, plot.right - x),
      height: plot.bottom - y,
      // The 429 part is drawn at the top of the bar it belongs to.
      limitedY: y,
      limitedHeight,
    };
  });

  const marks = bars
    .filter((bar) => bar.rateLimited > 0)
    .map((bar) => ({ x: bar.x + bar.width / 2, y: Math.max(plot.top, bar.y - 3), count: bar.rateLimited, start: bar.start }));

  const yTicks = [];
  for (let value = 0; value <= scale.max; value += scale.step) yTicks.push({ value, y: yOf(value) });

  const longSpan = to - from > 2 * DAY_MS;
  const every = labelStepHours(longSpan, ((longSpan ? DAY_MS : HOUR_MS) / (to - from)) * plotWidth);
  const xTicks = [];
  let kept = 0;
  for (let ms = Math.ceil(from / HOUR_MS) * HOUR_MS; ms <= to; ms += HOUR_MS) {
    const { hours, minutes } = parts(ms, utc);
    if (minutes !== 0) continue;
    if (longSpan ? hours !== 0 : hours % every !== 0) continue;
    // A week keeps every Nth midnight, counted from the first, when days are too narrow for a label each.
    if (longSpan && kept++ % (every / 24) !== 0) continue;
    xTicks.push({ time: ms, x: xOf(ms), label: tickLabel(ms, longSpan, utc) });
  }

  const totals = bars.reduce(
    (sum, bar) => ({ requests: sum.requests + bar.requests, rateLimited: sum.rateLimited + bar.rateLimited, errors: sum.errors + bar.errors }),
    { requests: 0, rateLimited: 0, errors: 0 },
  );

  return { size, plot, from, to, bucketMs, bars, marks, yTicks, xTicks, totals, scaleMax: scale.max };
}

function svg(doc, tag, attributes, text) {
  const element = doc.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

const round = (value) => Math.round(value * 10) / 10;

function describeBar(bar, utc, bucketMs) {
  const start = new Date(bar.start);
  const when = utc ? start.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : start.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  const span = bucketMs === DAY_MS ? 'day from' : 'hour from';
  const limited = bar.rateLimited > 0 ? `, ${bar.rateLimited} rate-limited (429)` : '';
  const errors = bar.errors > 0 ? `, ${bar.errors} errors` : '';
  return `${bar.requests} requests in the ${span} ${when}${limited}${errors}`;
}

/**
 * An <svg> element drawing `series`; every label is set as text, never parsed as markup.
 * `doc` needs only createElementNS, and the elements it makes only setAttribute, appendChild
 * and a textContent property — a minimal stand-in works in tests.
 */
export function renderUsageChart(doc, series, options = {}) {
  const geometry = chartGeometry(series, options);
  const utc = options.utc === true;
  const { size, plot, marks, yTicks, xTicks, totals } = geometry;
  const unit = series.granularity === 'day' ? 'day' : 'hour';
  // The server sends every bucket, empty ones included; only those with traffic get a bar.
  const bars = geometry.bars.filter((bar) => bar.requests > 0 || bar.rateLimited > 0);

  const root = svg(doc, 'svg', {
    class: 'usage-chart',
    viewBox: `0 0 ${size.width} ${size.height}`,
    role: 'img',
    'aria-label': `Requests per ${unit}: ${totals.requests} requests, ${totals.rateLimited} rate-limited, in ${bars.length} ${unit}s with traffic`,
    'data-bars': bars.length,
    'data-total-requests': totals.requests,
    'data-total-rate-limited': totals.rateLimited,
  });
  root.appendChild(svg(doc, 'title', {}, `Requests per ${unit}`));

  const grid = svg(doc, 'g', { class: 'chart-grid' });
  for (const tick of yTicks) {
    grid.appendChild(svg(doc, 'line', { x1: plot.left, x2: plot.right, y1: round(tick.y), y2: round(tick.y) }));
    grid.appendChild(svg(doc, 'text', { x: plot.left - 8, y: round(tick.y) + 4, 'text-anchor': 'end' }, String(tick.value)));
  }
  root.appendChild(grid);

  const axis = svg(doc, 'g', { class: 'chart-axis' });
  axis.appendChild(svg(doc, 'line', { x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom }));
  for (const tick of xTicks) {
    axis.appendChild(svg(doc, 'line', { x1: round(tick.x), x2: round(tick.x), y1: plot.bottom, y2: plot.bottom + 4 }));
    axis.appendChild(svg(doc, 'text', { x: round(tick.x), y: plot.bottom + 18, 'text-anchor': 'middle' }, tick.label));
  }
  root.appendChild(axis);

  const barGroup = svg(doc, 'g', { class: 'chart-bars' });
  for (const bar of bars) {
    const group = svg(doc, 'g', { class: bar.rateLimited > 0 ? 'bar limited' : 'bar', 'data-start': new Date(bar.start).toISOString(), 'data-requests': bar.requests, 'data-rate-limited': bar.rateLimited });
    group.appendChild(svg(doc, 'title', {}, describeBar(bar, utc, geometry.bucketMs)));
    group.appendChild(svg(doc, 'rect', { class: 'bar-requests', x: round(bar.x), y: round(bar.y), width: round(bar.width), height: round(bar.height) }));
    if (bar.rateLimited > 0) {
      group.appendChild(svg(doc, 'rect', { class: 'bar-limited', x: round(bar.x), y: round(bar.limitedY), width: round(bar.width), height: round(Math.max(1, bar.limitedHeight)) }));
    }
    barGroup.appendChild(group);
  }
  root.appendChild(barGroup);

  // A triangle above each bar with 429s, so even one rate-limited request is visible.
  const markGroup = svg(doc, 'g', { class: 'chart-marks', 'aria-hidden': 'true' });
  for (const mark of marks) {
    const x = round(mark.x);
    const y = round(mark.y);
    markGroup.appendChild(svg(doc, 'path', { class: 'limit-mark', d: `M${x - 4} ${y - 7} L${x + 4} ${y - 7} L${x} ${y} Z` }));
  }
  root.appendChild(markGroup);

  if (totals.requests === 0 && totals.rateLimited === 0) {
    root.appendChild(svg(doc, 'text', { class: 'chart-empty', x: (plot.left + plot.right) / 2, y: (plot.top + plot.bottom) / 2, 'text-anchor': 'middle' }, 'No requests in this period'));
  }
  return root;
}
