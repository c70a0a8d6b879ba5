// One JSON line per request on stdout: time, method, route pattern, status, duration, key id
// and request id, never a key. Lines are gathered and written once per event-loop turn,
// because a write per request to a pipe costs more than the request itself.

export interface AccessLogEntry {
  method: string;
  route: string | null;
  path: string;
  status: number;
  durationMs: number;
  keyId: string | null;
  requestId: string;
}

export class AccessLog {
  private pending: string[] = [];
  private scheduled = false;
  private readonly write: (text: string) => void;
  private readonly now: () => number;

  constructor(write: (text: string) => void, now: () => number) {
    this.write = write;
    this.now = now;
  }

  record(entry: AccessLogEntry): void {
    this.pending.push(
      JSON.stringify({
        time: new Date(this.now()).toISOString(),
        method: entry.method,
        route: entry.route,
        // The raw path only when no route matched (a 404), so ids never fill the log.
        path: entry.route === null ? entry.path.slice(0, 200) : undefined,
        status: entry.status,
        duration_ms: Math.round(entry.durationMs * 1000) / 1000,
        key_id: entry.keyId,
        request_id: entry.requestId,
      }),
    );
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('\n') + '\n';
    this.pending = [];
    this.write(text);
  }
}
