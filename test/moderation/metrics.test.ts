// GET /metrics: read by a strict parser of the Prometheus text format (0.0.4) written here:
// metric and label names, # HELP / # TYPE lines before their samples, escaped label values,
// numbers, no duplicate series, histogram buckets cumulative and ending in +Inf with matching
// _count. Then the values: requests by route, method and status class, durations, 429s, fsyncs,
// log size, webhook outcomes and backlog, memory and event-loop delay.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import test from 'node:test';
import { startServer } from '../helpers/server.ts';
import { eventually } from '../helpers/eventually.ts';
import { answer, startReceiver, waitFor } from '../webhooks/fixtures.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  type: string;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseNumber(text: string, where: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  assert.match(text, /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, `${where}: "${text}" is a number`);
  return Number(text);
}

/** Parses `{a="x",b="y"}` starting at `text[start]`; returns the labels and the index after `}`. */
function parseLabels(text: string, start: number, where: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let index = start + 1;
  for (;;) {
    if (text[index] === '}') return { labels, end: index + 1 };
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(index));
    assert.ok(nameMatch, `${where}: label name at ${index}`);
    const name = nameMatch[0];
    assert.ok(LABEL_NAME.test(name) && !name.startsWith('__'), `${where}: label name ${name}`);
    assert.ok(!(name in labels), `${where}: label ${name} given twice`);
    index += name.length;
    assert.equal(text[index], '=', `${where}: "=" after ${name}`);
    assert.equal(text[index + 1], '"', `${where}: quoted value of ${name}`);
    index += 2;
    let value = '';
    for (;;) {
      const char = text[index];
      assert.ok(char !== undefined && char !== '\n', `${where}: unterminated value of ${name}`);
      if (char === '"') break;
      if (char === '\\') {
        const next = text[index + 1];
        assert.ok(next === '\\' || next === '"' || next === 'n', `${where}: bad escape \\${next}`);
        value += next === 'n' ? '\n' : next;
        index += 2;
        continue;
      }
      value += char;
      index += 1;
    }
    labels[name] = value;
    index += 1;
    if (text[index] === ',') index += 1;
    else assert.equal(text[index], '}', `${where}: "," or "}" after a label`);
  }
}

/** The family a sample belongs to: histogram samples carry _bucket, _sum or _count. */
function familyName(sampleName: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = sampleName.slice(0, -suffix.length);
    const family = families.get(base);
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return sampleName;
}

function parsePrometheusText(text: string): Map<string, Family> {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const seenSeries = new Set<string>();
  let current: string | null = null;
  text.slice(0, -1).split('\n').forEach((line, lineIndex) => {
    const where = `line ${lineIndex + 1} "${line}"`;
    assert.notEqual(line, '', `${where}: no blank lines`);
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) return; // a plain comment
      const [, kind, name, rest] = meta;
      assert.ok(METRIC_NAME.test(name!), `${where}: metric name`);
      assert.ok(!finished.has(name!), `${where}: ${name} appears again after other families`);
      if (current !== null && current !== name) finished.add(current);
      current = name!;
      let family = families.get(name!);
      if (!family) {
        family = { name: name!, type: 'untyped', help: null, samples: [] };
        families.set(name!, family);
      }
      assert.equal(family.samples.length, 0, `${where}: # ${kind} comes before the samples`);
      if (kind === 'TYPE') {
        assert.ok(TYPES.has(rest!), `${where}: known type`);
        family.type = rest!;
      } else {
        assert.equal(family.help, null, `${where}: one HELP per family`);
        family.help = rest!;
      }
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    assert.ok(nameMatch, `${where}: starts with a metric name`);
    const sampleName = nameMatch[0];
    let index = sampleName.length;
    let labels: Record<string, string> = {};
    if (line[index] === '{') ({ labels, end: index } = parseLabels(line, index, where));
    assert.equal(line[index], ' ', `${where}: one space before the value`);
    const [valueText, timestamp, extra] = line.slice(index + 1).split(' ');
    assert.equal(extra, undefined, `${where}: nothing after the timestamp`);
    if (timestamp !== undefined) assert.match(timestamp, /^-?\d+$/, `${where}: integer timestamp`);
    const value = parseNumber(valueText!, where);
    const name = familyName(sampleName, families);
    const family = families.get(name);
    assert.ok(family && family.type !== 'untyped', `${where}: # TYPE ${name} comes before its samples`);
    assert.equal(current, name, `${where}: the samples of a family are together`);
    const series = `${sampleName}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seenSeries.has(series), `${where}: duplicate series`);
    seenSeries.add(series);
    if (family.type === 'counter') assert.ok(value >= 0, `${where}: a counter is not negative`);
    family.samples.push({ name: sampleName, labels, value });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: Array<{ le: number; value: number }>; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name === `${family.name}_bucket`) {
      assert.ok(le !== undefined, `${family.name}: a bucket has le`);
      group.buckets.push({ le: parseNumber(le, `${family.name} le`), value: sample.value });
    } else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else assert.fail(`${sample.name} does not belong to histogram ${family.name}`);
  }
  for (const [labels, group] of groups) {
    const where = `${family.name}${labels}`;
    assert.ok(group.buckets.length > 0, `${where}: has buckets`);
    for (let index = 1; index < group.buckets.length; index += 1) {
      assert.ok(group.buckets[index]!.le > group.buckets[index - 1]!.le, `${where}: le increases`);
      assert.ok(group.buckets[index]!.value >= group.buckets[index - 1]!.value, `${where}: buckets are cumulative`);
    }
    const last = group.buckets[group.buckets.length - 1]!;
    assert.equal(last.le, Infinity, `${where}: the last bucket is +Inf`);
    assert.equal(group.count, last.value, `${where}: _count equals the +Inf bucket`);
    assert.ok(group.sum !== undefined && Number.isFinite(group.sum), `${where}: has _sum`);
  }
}

function sampleValue(families: Map<string, Family>, family: string, sampleName: string, labels: Record<string, string> = {}): number | undefined {
  return families.get(family)?.samples.find((sample) => sample.name === sampleName && Object.entries(labels).every(([name, value]) => sample.labels[name] === value))?.value;
}

test('the strict parser itself refuses malformed expositions', async (t) => {
  const bad = [
    'metric_without_type 1\n',
    '# TYPE m counter\nm{a="x} 1\n',
    '# TYPE m counter\nm{a="\\x"} 1\n',
    '# TYPE m counter\nm -1\n',
    '# TYPE 1m counter\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
    '# TYPE m gauge\nm 1\nm 2\n',
    '# TYPE m gauge\nm 1',
  ];
  for (const text of bad) {
    await t.test(JSON.stringify(text).slice(0, 60), async () => {
      assert.throws(() => parsePrometheusText(text), assert.AssertionError, JSON.stringify(text));
    });
  }
  const good = parsePrometheusText('# HELP m A gauge.\n# TYPE m gauge\nm{path="a\\"b\\\\c\\nd"} 1.5\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 3\nh_count 2\n');
  assert.equal(good.get('m')!.samples[0]!.labels.path, 'a"b\\c\nd');
});

test('GET /metrics needs the operator token and serves the Prometheus text format with every promised metric', async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10' } });
  assert.equal((await server.request('GET', '/metrics')).status, 401);
  assert.equal((await server.request('GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401);

  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings', 'write:webhooks'], 1000);
  const limited = await server.userWithKey('member', ['read:listings'], 1);
  const receiver = await startReceiver(t, answer(200));
  assert.equal((await server.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url } })).status, 201);
  await waitFor('the ping', () => receiver.received.length === 1);
  // The outcome is recorded on the webhook a moment after the receiver answered.
  await eventually(
    async () => (await server.admin('GET', `/admin/v1/webhooks?user_id=${creator.userId}`)).body.data[0]?.last_delivery?.status === 'delivered',
    30_000,
    'the ping recorded as delivered',
  );
  for (let index = 0; index < 3; index += 1) await server.request('GET', '/v1/listings', { key: creator.key });
  await server.request('GET', '/v1/listings/lst_missing', { key: creator.key });
  await server.request('GET', '/v1/listings', { key: limited.key });
  assert.equal((await server.request('GET', '/v1/listings', { key: limited.key })).status, 429);
  await server.request('GET', '/no/such/path');

  const response = await server.admin('GET', '/metrics');
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusText(response.text);

  const requests = (labels: Record<string, string>) => sampleValue(families, 'marketplace_http_requests_total', 'marketplace_http_requests_total', labels);
  assert.equal(families.get('marketplace_http_requests_total')!.type, 'counter');
  assert.ok(requests({ route: '/v1/listings', method: 'GET', status_class: '2xx' })! >= 4);
  assert.equal(requests({ route: '/v1/listings/:id', method: 'GET', status_class: '4xx' }), 1);
  assert.equal(requests({ route: '/v1/listings', method: 'GET', status_class: '4xx' }), 1, 'the 429');
  assert.ok(requests({ route: 'unmatched', method: 'GET', status_class: '4xx' })! >= 1);
  assert.equal(families.get('marketplace_http_request_duration_seconds')!.type, 'histogram');
  assert.ok(sampleValue(families, 'marketplace_http_request_duration_seconds', 'marketplace_http_request_duration_seconds_count', { route: '/v1/listings' })! >= 5);
  assert.equal(sampleValue(families, 'marketplace_http_rate_limited_total', 'marketplace_http_rate_limited_total'), 1);
  assert.equal(families.get('marketplace_store_fsync_duration_seconds')!.type, 'histogram');
  assert.ok(sampleValue(families, 'marketplace_store_fsync_duration_seconds', 'marketplace_store_fsync_duration_seconds_count')! >= 4, 'each acknowledged write was fsynced');
  const stats = await server.admin('GET', '/admin/v1/stats');
  assert.ok(sampleValue(families, 'marketplace_store_log_bytes', 'marketplace_store_log_bytes')! > 0);
  assert.ok(sampleValue(families, 'marketplace_store_log_bytes', 'marketplace_store_log_bytes')! <= stats.body.data.store.logBytes);
  assert.equal(sampleValue(families, 'marketplace_webhook_deliveries_total', 'marketplace_webhook_deliveries_total', { outcome: 'delivered' }), 1);
  assert.equal(sampleValue(families, 'marketplace_webhook_deliveries_pending', 'marketplace_webhook_deliveries_pending'), 0);
  assert.ok(sampleValue(families, 'process_resident_memory_bytes', 'process_resident_memory_bytes')! > 10_000_000);
  assert.equal(families.get('marketplace_event_loop_delay_seconds')!.type, 'histogram');
  assert.ok(sampleValue(families, 'marketplace_event_loop_delay_seconds', 'marketplace_event_loop_delay_seconds_count')! > 0);
  // A request's own count shows on the next scrape: the first /metrics was counted.
  const again = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  assert.equal(sampleValue(again, 'marketplace_http_requests_total', 'marketplace_http_requests_total', { route: '/metrics', method: 'GET', status_class: '2xx' }), 1);
});

test('client-chosen paths and methods do not become label values (bounded series)', async (t) => {
  const server = await startServer(t, { dataDir: null });
  for (let index = 0; index < 20; index += 1) await server.request('GET', `/random-${index}-"quoted"\\`);
  const families = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  const routes = new Set(families.get('marketplace_http_requests_total')!.samples.map((sample) => sample.labels.route));
  assert.ok(![...routes].some((route) => route!.includes('random')), [...routes].join(', '));
});

test('requests refused before routing are counted under the route they asked for; unmatched is kept for unknown paths; parser refusals are counted', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { CORS_ORIGINS: 'https://app.example' } });
  assert.equal((await server.request('GET', '/v1/listings')).status, 401);
  assert.equal((await server.request('GET', '/v1/listings/lst_x', { key: 'market_live_wrong' })).status, 401);
  assert.equal((await server.request('GET', '/admin/v1/users', { headers: { authorization: 'Bearer wrong-token' } })).status, 401);
  const preflight = await fetch(`${server.url}/v1/webhooks`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  assert.equal(preflight.status, 204);
  assert.equal((await server.request('GET', '/v1/no-such-thing')).status, 401);
  const garbage = await new Promise<string>((resolve, reject) => {
    const socket = connect(new URL(server.url).port ? Number(new URL(server.url).port) : 80, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write('THIS IS NOT HTTP\r\n\r\n');
  });
  assert.match(garbage, /^HTTP\/1\.1 400/);

  const families = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  const requests = (labels: Record<string, string>) => sampleValue(families, 'marketplace_http_requests_total', 'marketplace_http_requests_total', labels);
  assert.equal(requests({ route: '/v1/listings', method: 'GET', status_class: '4xx' }), 1, 'the 401 without a key');
  assert.equal(requests({ route: '/v1/listings/:id', method: 'GET', status_class: '4xx' }), 1, 'the 401 with a wrong key');
  assert.equal(requests({ route: '/admin/v1/users', method: 'GET', status_class: '4xx' }), 1, 'the wrong operator token');
  assert.equal(requests({ route: '/v1/webhooks', method: 'OPTIONS', status_class: '2xx' }), 1, 'the preflight');
  assert.equal(requests({ route: 'unmatched', method: 'GET', status_class: '4xx' }), 1, 'only the unknown path');
  assert.equal(requests({ route: 'invalid_request', method: 'OTHER', status_class: '4xx' }), 1, 'the parser\'s 400');
});

test('the event-loop delay is a histogram that never resets, so two scrapers both see every sample; process start time and CPU seconds are reported', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const first = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  const delay = first.get('marketplace_event_loop_delay_seconds');
  assert.equal(delay?.type, 'histogram');
  // A histogram with no sample yet may show no series: a scrape right after the start (a fast
  // machine, or a warm one later in the file) then reads as 0, not as a missing number.
  const countOf = (families: Map<string, Family>) => sampleValue(families, 'marketplace_event_loop_delay_seconds', 'marketplace_event_loop_delay_seconds_count') ?? 0;
  const before = countOf(first);
  let second = first;
  for (let tries = 0; countOf(second) <= before && tries < 500; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    second = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  }
  assert.ok(countOf(second) > before, 'samples keep adding up across scrapes');
  const third = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  assert.ok(countOf(third) >= countOf(second), 'a scrape never resets the count');

  const start = sampleValue(third, 'process_start_time_seconds', 'process_start_time_seconds')!;
  assert.equal(third.get('process_start_time_seconds')?.type, 'gauge');
  assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 5, `start time ${start}`);
  assert.equal(third.get('process_cpu_seconds_total')?.type, 'counter');
  const cpu = sampleValue(third, 'process_cpu_seconds_total', 'process_cpu_seconds_total')!;
  assert.ok(cpu > 0 && cpu <= process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 + 1, `cpu ${cpu}`);
});

test('a 405 on a real path is counted under that route, not as unmatched (which is kept for unknown paths)', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings'], 1000);
  assert.equal((await server.request('PATCH', '/v1/listings/lst_x', { key: creator.key })).status, 405);
  assert.equal((await server.request('PUT', '/v1/listings', { key: creator.key, body: {} })).status, 405);

  const families = parsePrometheusText((await server.admin('GET', '/metrics')).text);
  const requests = (labels: Record<string, string>) => sampleValue(families, 'marketplace_http_requests_total', 'marketplace_http_requests_total', labels);
  assert.equal(requests({ route: '/v1/listings/:id', method: 'PATCH', status_class: '4xx' }), 1);
  assert.equal(requests({ route: '/v1/listings', method: 'PUT', status_class: '4xx' }), 1);
  assert.equal(requests({ route: 'unmatched', method: 'PATCH', status_class: '4xx' }), undefined);
  assert.equal(requests({ route: 'unmatched', method: 'PUT', status_class: '4xx' }), undefined);
});
