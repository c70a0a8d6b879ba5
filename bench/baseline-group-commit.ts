// Baseline "group commit": a bare node:http durable writer for scenario D. It reads each POST's
// body, appends one log line per write (the bytes of a line the server under test wrote for
// such a POST, captured at the start of the run) and answers with the exact status, headers and
// body the server sent for it (bench/capture.ts). Writes that arrive while a batch is being
// written and fsynced go out together in the next one: one write and one fdatasync per batch,
// and no answer before its batch is durable. Whatever the server does beyond this is its own cost.
// GET /admin/v1/stats answers its counters in the server's shape, so fsyncs per write are measured alike.
// Usage: node bench/baseline-group-commit.ts --port 3103 --answer answer.json --line line.txt --log FILE

import { constants, promises as fsp, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import type { CapturedAnswer } from './capture.ts';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    /** The server's captured answer to one POST (status, flat headers, body). */
    answer: { type: 'string' },
    /** One log line exactly as the server appended it for that POST (newline included). */
    line: { type: 'string' },
    /** The file to append to (created or emptied). */
    log: { type: 'string' },
  },
});
if (values.answer === undefined || values.line === undefined || values.log === undefined) {
  throw new Error('--answer FILE, --line FILE and --log FILE are required');
}

const captured = JSON.parse(readFileSync(values.answer, 'utf8')) as CapturedAnswer;
const answer = { status: captured.status, headers: captured.headers, body: Buffer.from(captured.body, 'base64') };
const line = readFileSync(values.line);
const log = await fsp.open(values.log, constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC, 0o600);

let position = 0;
let waiting: ServerResponse[] = [];
let writing = false;
const counters = { writes: 0, batches: 0, fsyncs: 0 };

/** Writes every waiting write's line in one append, fdatasyncs, then answers them all. */
async function commitWaiting(): Promise<void> {
  writing = true;
  try {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      const bytes = Buffer.allocUnsafe(line.length * batch.length);
      for (let index = 0; index < batch.length; index++) line.copy(bytes, index * line.length);
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await log.write(bytes, written, bytes.length - written, position + written);
        written += bytesWritten;
      }
      await log.datasync();
      position += bytes.length;
      counters.batches += 1;
      counters.fsyncs += 1;
      counters.writes += batch.length;
      for (const res of batch) {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      }
    }
  } finally {
    writing = false;
  }
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    req.resume();
    const body = JSON.stringify({ data: { store: counters } });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  // The write needs its whole body, as the server's does.
  req.on('data', () => {});
  req.on('end', () => {
    waiting.push(res);
    if (!writing) {
      commitWaiting().catch((error: unknown) => {
        console.error(`group-commit baseline: ${(error as Error).message}`);
        process.exit(1);
      });
    }
  });
});
server.keepAliveTimeout = 60_000;

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : values.port;
  console.log(`group-commit baseline listening on http://${values.host}:${port} (line ${line.length} B, answer ${answer.status} with ${answer.body.length} B)`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => void log.close().finally(() => process.exit(0))).closeAllConnections());
}
