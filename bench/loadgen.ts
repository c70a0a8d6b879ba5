// The project's own load generator, used when wrk is not installed. It runs in its own process,
// keeps N raw TCP connections open and writes one hand-built HTTP/1.1 request at a time on each
// (no pipelining), parsing only the status line and framing of each answer; it prints one JSON
// object with req/s, latency percentiles and status counts on stdout.
// Usage: node --import tsx bench/loadgen.ts --url http://127.0.0.1:3000 --requests FILE
//          [--header 'Authorization: Bearer …']… [--connections 10] [--duration 5] [--warmup 1]
// FILE holds one request per line: METHOD<TAB>PATH[<TAB>JSON body].

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

export interface LoadResult {
  generator: string;
  connections: number;
  duration_s: number;
  requests: number;
  rps: number;
  latency_ms: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  statuses: Record<string, number>;
  non_2xx: number;
  socket_errors: number;
  /** CPU this generator used while measuring, in % of one core: near 100 means it was the limit. */
  cpu_percent: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

/** Pre-serialises every request line of the file into the exact bytes sent on the wire. */
function buildRequests(fileText: string, hostHeader: string, extraHeaders: readonly string[]): Buffer[] {
  const common = [`Host: ${hostHeader}`, ...extraHeaders].map((header) => `${header}\r\n`).join('');
  const requests: Buffer[] = [];
  for (const line of fileText.split('\n')) {
    if (line.trim() === '') continue;
    const [method, path, body = ''] = line.split('\t');
    if (method === undefined || path === undefined) continue;
    const bodyBytes = Buffer.from(body);
    const framing =
      bodyBytes.length > 0 || method === 'POST' || method === 'PUT'
        ? `Content-Type: application/json\r\nContent-Length: ${bodyBytes.length}\r\n`
        : '';
    requests.push(Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\n${common}${framing}\r\n`), bodyBytes]));
  }
  if (requests.length === 0) throw new Error('the requests file holds no request');
  return requests;
}

/** Latency samples in milliseconds, kept whole (a run is at most a few hundred thousand). */
class LatencySamples {
  private values = new Float64Array(1 << 16);
  count = 0;

  add(milliseconds: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = milliseconds;
  }

  summary(): LoadResult['latency_ms'] {
    const sorted = this.values.slice(0, this.count).sort();
    const at = (quantile: number): number =>
      sorted.length === 0 ? 0 : round3(sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))]!);
    let total = 0;
    for (const value of sorted) total += value;
    return {
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      p999: at(0.999),
      max: at(1),
      mean: sorted.length === 0 ? 0 : round3(total / sorted.length),
    };
  }
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

interface RunOptions {
  host: string;
  port: number;
  requests: Buffer[];
  connections: number;
  durationS: number;
  warmupS: number;
}

/** One keep-alive connection with one request in flight, and the state of the answer being read. */
class Connection {
  private socket: Socket | null = null;
  private startedAt = 0;
  private head: Buffer | null = null;
  private status = 0;
  private bodyLeft = 0;
  private chunked = false;
  private chunkTail: Buffer | null = null;
  private closeAfter = false;
  private inBody = false;
  private readonly run: LoadRun;

  constructor(run: LoadRun) {
    this.run = run;
  }

  open(): void {
    const socket = connect({ host: this.run.options.host, port: this.run.options.port });
    socket.setNoDelay(true);
    socket.on('connect', () => this.send());
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => this.run.socketErrors++);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.run.running) setTimeout(() => this.open(), 10);
    });
    this.socket = socket;
  }

  close(): void {
    const socket = this.socket;
    this.socket = null;
    socket?.destroy();
  }

  private send(): void {
    if (!this.run.running || this.socket === null) return;
    const requests = this.run.options.requests;
    this.head = null;
    this.inBody = false;
    this.chunkTail = null;
    this.startedAt = performance.now();
    this.socket.write(requests[Math.floor(Math.random() * requests.length)]!);
  }

  private read(chunk: Buffer): void {
    let data = chunk;
    if (!this.inBody) {
      if (this.head !== null) data = Buffer.concat([this.head, chunk]);
      const end = data.indexOf(HEAD_END);
      if (end === -1) {
        this.head = data;
        return;
      }
      this.parseHead(data.toString('latin1', 0, end));
      data = data.subarray(end + HEAD_END.length);
      this.inBody = true;
    }
    if (this.chunked) {
      // One answer in flight per connection, so the chunked body ends where the stream pauses
      // on the zero-length chunk; no trailers are expected from these servers.
      const tail = this.chunkTail === null ? data : Buffer.concat([this.chunkTail, data]);
      this.chunkTail = tail.subarray(Math.max(0, tail.length - CHUNKED_END.length));
      if (this.chunkTail.length === CHUNKED_END.length && this.chunkTail.equals(CHUNKED_END)) this.finish();
      return;
    }
    this.bodyLeft -= data.length;
    if (this.bodyLeft <= 0) this.finish();
  }

  private parseHead(head: string): void {
    this.status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
    this.chunked = length === null && /\r\ntransfer-encoding:[ \t]*chunked/i.test(head);
    this.bodyLeft = length === null || this.status === 204 || this.status === 304 ? 0 : Number(length[1]);
    this.closeAfter = /\r\nconnection:[ \t]*close/i.test(head);
  }

  private finish(): void {
    this.run.record(this.status, performance.now() - this.startedAt);
    if (this.closeAfter) this.socket?.end();
    else this.send();
  }
}

class LoadRun {
  readonly options: RunOptions;
  running = true;
  measuring = false;
  socketErrors = 0;
  private readonly samples = new LatencySamples();
  private readonly statuses = new Map<number, number>();

  constructor(options: RunOptions) {
    this.options = options;
  }

  record(status: number, milliseconds: number): void {
    if (!this.measuring) return;
    this.samples.add(milliseconds);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  async execute(): Promise<LoadResult> {
    const connections = Array.from({ length: this.options.connections }, () => new Connection(this));
    connections.forEach((connection) => connection.open());
    await sleep(this.options.warmupS * 1000);
    this.socketErrors = 0;
    this.measuring = true;
    const measureStart = performance.now();
    const cpuStart = process.cpuUsage();
    await sleep(this.options.durationS * 1000);
    this.measuring = false;
    const elapsedS = (performance.now() - measureStart) / 1000;
    const cpuUsed = process.cpuUsage(cpuStart);
    this.running = false;
    connections.forEach((connection) => connection.close());

    const statuses: Record<string, number> = {};
    let non2xx = 0;
    for (const [status, count] of [...this.statuses].sort((left, right) => left[0] - right[0])) {
      statuses[String(status)] = count;
      if (status < 200 || status > 299) non2xx += count;
    }
    return {
      generator: 'node-loadgen',
      connections: this.options.connections,
      duration_s: round3(elapsedS),
      requests: this.samples.count,
      rps: Math.round(this.samples.count / elapsedS),
      latency_ms: this.samples.summary(),
      statuses,
      non_2xx: non2xx,
      socket_errors: this.socketErrors,
      cpu_percent: Math.round((cpuUsed.user + cpuUsed.system) / 1e4 / elapsedS),
    };
  }
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      requests: { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      connections: { type: 'string', default: '10' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
    },
  });
  if (values.url === undefined || values.requests === undefined) {
    console.error('loadgen: --url and --requests are required');
    process.exit(2);
  }
  const url = new URL(values.url);
  const requests = buildRequests(readFileSync(values.requests, 'utf8'), url.host, values.header);
  const result = await new LoadRun({
    host: url.hostname,
    port: Number(url.port || 80),
    requests,
    connections: Number(values.connections),
    durationS: Number(values.duration),
    warmupS: Number(values.warmup),
  }).execute();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

// run.ts imports only the LoadResult type from here, so running main at load is safe.
await main();
