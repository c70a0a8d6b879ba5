// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
// text exposition format 0.0.4 (# HELP and # TYPE lines, escaped label values, cumulative
// histogram buckets ending in +Inf, then _sum and _count). No dependency needed for this.

type Labels = Record<string, string>;

interface Metric {
  readonly name: string;
  render(): string;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class Registry {
  private readonly metrics: Metric[] = [];
  private readonly collectors: Array<() => void> = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(checkName(name), help, checkLabels(labelNames)));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(checkName(name), help, checkLabels(labelNames)));
  }

  histogram(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []): Histogram {
    return this.add(new Histogram(checkName(name), help, buckets, checkLabels(labelNames)));
  }

  /** Runs before each render, to read values that are sampled rather than counted (memory, sizes). */
  beforeRender(collect: () => void): void {
    this.collectors.push(collect);
  }

  render(): string {
    for (const collect of this.collectors) collect();
    return this.metrics.map((metric) => metric.render()).join('');
  }

  private add<M extends Metric>(metric: M): M {
    if (this.metrics.some((existing) => existing.name === metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.push(metric);
    return metric;
  }
}

abstract class LabelledMetric<V> implements Metric {
  readonly name: string;
  protected readonly help: string;
  protected readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { labels: Labels; value: V }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  abstract render(): string;

  protected header(type: string): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${type}\n`;
  }

  protected entry(labels: Labels, fresh: () => V): { labels: Labels; value: V } {
    const key = this.labelNames.map((name) => labels[name] ?? '').join('\u0000');
    let entry = this.series.get(key);
    if (entry === undefined) {
      const complete: Labels = {};
      for (const name of this.labelNames) complete[name] = labels[name] ?? '';
      entry = { labels: complete, value: fresh() };
      this.series.set(key, entry);
    }
    return entry;
  }
}

export class Counter extends LabelledMetric<number> {
  inc(labels: Labels = {}, amount = 1): void {
    this.entry(labels, () => 0).value += amount;
  }

  /** One series' own increment, for a caller that counts the same labels very often (no label look-up per count). */
  seriesOf(labels: Labels): (amount?: number) => void {
    const entry = this.entry(labels, () => 0);
    return (amount = 1) => {
      entry.value += amount;
    };
  }

  render(): string {
    let text = this.header('counter');
    if (this.series.size === 0 && this.labelNames.length === 0) text += `${this.name} 0\n`;
    for (const { labels, value } of this.series.values()) text += `${this.name}${labelText(labels)} ${formatNumber(value)}\n`;
    return text;
  }
}

export class Gauge extends LabelledMetric<number> {
  set(value: number, labels: Labels = {}): void {
    this.entry(labels, () => 0).value = value;
  }

  render(): string {
    let text = this.header('gauge');
    for (const { labels, value } of this.series.values()) text += `${this.name}${labelText(labels)} ${formatNumber(value)}\n`;
    return text;
  }
}

interface HistogramValue {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends LabelledMetric<HistogramValue> {
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, buckets: readonly number[], labelNames: readonly string[]) {
    super(name, help, labelNames);
    if (labelNames.includes('le')) throw new Error('a histogram may not have a label named le');
    this.bounds = [...buckets].sort((left, right) => left - right);
  }

  observe(value: number, labels: Labels = {}): void {
    this.addTo(this.seriesValue(labels), value);
  }

  /** One series' own observe, for a caller that observes the same labels very often (no label look-up per value). */
  seriesOf(labels: Labels): (value: number) => void {
    const series = this.seriesValue(labels);
    return (value) => this.addTo(series, value);
  }

  private seriesValue(labels: Labels): HistogramValue {
    return this.entry(labels, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 })).value;
  }

  private addTo(series: HistogramValue, value: number): void {
    // Each observation lands in its first bucket; render() makes the counts cumulative.
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    if (bucket < bounds.length) series.counts[bucket]! += 1;
    series.sum += value;
    series.count += 1;
  }

  render(): string {
    let text = this.header('histogram');
    for (const { labels, value } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += value.counts[index]!;
        text += `${this.name}_bucket${labelText({ ...labels, le: formatNumber(bound) })} ${cumulative}\n`;
      });
      text += `${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${value.count}\n`;
      text += `${this.name}_sum${labelText(labels)} ${formatNumber(value.sum)}\n`;
      text += `${this.name}_count${labelText(labels)} ${value.count}\n`;
    }
    return text;
  }
}

function labelText(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return '';
  return `{${names.map((name) => `${name}="${escapeLabelValue(labels[name]!)}"`).join(',')}}`;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function checkName(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid metric name ${name}`);
  return name;
}

function checkLabels(names: readonly string[]): readonly string[] {
  for (const name of names) if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`invalid label name ${name}`);
  return names;
}
