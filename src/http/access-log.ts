// One JSON line per request on stdout: time, method, route pattern, status, duration, key id
// and request id, never a key. Lines are gathered and written together at most every
// FLUSH_MS (sooner once FLUSH_BYTES are waiting, and at close): standard output to a pipe is
// written synchronously, and one write per event-loop turn was still the largest single cost
// of a cached page (profiled: ~20% of the server's time); a write per request costs more than
// the request itself.

export interface AccessLogEntry {
  method: string;
  route: string | null;
  path: string;
  status: number;
  durationMs: number;
  keyId: string | null;
  /** A UUID, made by the server (context.ts). */
  requestId: string;
  /** The client's address (src/http/client-address.ts: the peer, or from X-Forwarded-For behind a trusted proxy). */
  client?: string;
}

/** Longest a line waits before it is written. */
const FLUSH_MS = 20;
/** Lines waiting past this many characters are written at once (bounded memory under load). */
const FLUSH_CHARS = 64 * 1024;
/** Distinct methods, route labels and key ids whose JSON text is kept. */
const MAX_QUOTED_VALUES = 10_000;

export class AccessLog {
  private pending: string[] = [];
  private pendingChars = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly write: (text: string) => void;
  private readonly now: () => number;
  private lastMs = Number.NaN;
  private lastTime = '';
  private readonly quotedValues = new Map<string, string>();

  constructor(write: (text: string) => void, now: () => number) {
    this.write = write;
    this.now = now;
  }

  record(entry: AccessLogEntry): void {
    // Many requests share a millisecond under load: its ISO text is made once (profiled: a
    // visible share of a cached page's cost).
    const now = this.now();
    if (now !== this.lastMs) {
      this.lastMs = now;
      this.lastTime = new Date(now).toISOString();
    }
    // The same text as JSON.stringify of { time, method, route, path?, status, duration_ms,
    // key_id, request_id, client }, put together directly: about half the cost (measured).
    // The raw path only when no route matched (a 404), so ids never fill the log.
    const path = entry.route === null ? `,"path":${JSON.stringify(entry.path.slice(0, 200))}` : '';
    // The method, route, key id and request id come from a short list of names or are
    // generated ids: their JSON text is kept per value rather than made per line.
    const line =
      `{"time":"${this.lastTime}","method":${this.quoted(entry.method)},"route":${this.quoted(entry.route)}${path}` +
      `,"status":${jsonNumber(entry.status)},"duration_ms":${jsonNumber(Math.round(entry.durationMs * 1000) / 1000)}` +
      `,"key_id":${this.quoted(entry.keyId)},"request_id":${quotedId(entry.requestId)}` +
      `${entry.client === undefined ? '' : `,"client":${JSON.stringify(entry.client)}`}}`;
    this.pending.push(line);
    this.pendingChars += line.length + 1;
    if (this.pendingChars >= FLUSH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** JSON text of a method, route label or key id: few distinct values, each quoted once. */
  private quoted(value: string | null): string {
    if (value === null) return 'null';
    let text = this.quotedValues.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      // Bounded: key ids are as many as the keys in use; past this, start again.
      if (this.quotedValues.size >= MAX_QUOTED_VALUES) this.quotedValues.clear();
      this.quotedValues.set(value, text);
    }
    return text;
  }

  /** Writes every waiting line now (also called when the server closes). */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const text = this.pending.join('\n') + '\n';
    this.pending = [];
    this.pendingChars = 0;
    this.write(text);
  }
}

/** A request id is a UUID (crypto.randomUUID in context.ts): hex digits and dashes, nothing to escape. */
function quotedId(id: string): string {
  return `"${id}"`;
}

/** A number as JSON writes it (NaN and the infinities become null). */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
