// How many lines of src/ one request executes, and in how many files: the server runs in this
// process under V8's precise coverage (call counts, block ranges), the same request is made until
// every cache on its path is warm, the counts are reset, then exactly one more is made and counted.
// `get` is a cached GET /v1/listings; `post` a POST /v1/listings creating a listing, after earlier
// creates. Prints JSON: {request, modules, files, lines, functionLines, runs, list?}.
//
//   npm run bench:lines -- --request post --modules none [--runs 7] [--list]
//
// A line is executed when it holds code V8 ran during the request: V8 counts per range of the
// JavaScript tsx compiled (one line per file), each character takes the count of the innermost
// range around it, and each character with a count above zero is mapped back to its .ts line
// through the compiled file's inline source map, so comments, blank lines, types and branches
// not taken never count. `functionLines` counts instead the code lines of every function that
// ran, whole: counting comments and blank lines inside them as well gives the larger figures
// measured before this script (a cached GET "743–777 lines in 41 files", a POST "1,710 in 60").
//
// The window is one request, from sending it until the server has closed its response: the
// access log's write 20 ms later is left out (one write serves every request of those 20 ms).
// Some requests do more than others (the CPU budget's on-CPU share is read again every 250 ms,
// or after a millisecond's work, which coverage makes common), and the server's own timers (the
// event-loop sampler every 20 ms) may fire inside a window: so the request is counted `--runs`
// times and the smallest count is the figure; `runs` lists them all. Connections are kept alive,
// as a client in steady state keeps them: the measured request reuses the warm-up's connection.

import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import { SourceMap, type SourceMapping } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const TOKEN = 'executed-lines-operator-token-0123456789';
const REQUESTS = ['get', 'post'] as const;
type RequestKind = (typeof REQUESTS)[number];
/** Requests of the measured kind made before counting: enough for every cache and lazy path. */
const WARM_UP = 20;
/** Listings made before a GET, so the page it reads holds some. */
const SEEDED_LISTINGS = 5;
/** src/http/access-log.ts's FLUSH_MS. */
const ACCESS_LOG_FLUSH_MS = 20;

export interface ExecutedLines {
  request: RequestKind;
  modules: string;
  files: number;
  lines: number;
  /** The code lines of every function that ran, its branches not taken included. */
  functionLines: number;
  /** Every counted request, in order: the figures above are the smallest run's. */
  runs: { files: number; lines: number; functionLines: number }[];
  /** With `--list`: each file's count and its executed lines, as ranges ("12-15,20"). */
  list: { file: string; lines: number; at: string }[];
}

interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: { ranges: { startOffset: number; endOffset: number; count: number }[] }[];
}

export async function measureExecutedLines(kind: RequestKind, modules: string, runs = 7): Promise<ExecutedLines> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // Before src/ is imported: V8 counts precisely only the functions compiled after this.
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  const { createApp } = await import(pathToFileURL(join(SRC, 'app.ts')).href);
  const { loadConfig } = await import(pathToFileURL(join(SRC, 'config.ts')).href);

  const scratch = mkdtempSync(join(tmpdir(), 'executed-lines-'));
  const config = loadConfig({ PORT: '0', DATA_DIR: join(scratch, 'data'), MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: TOKEN, MARKETPLACE_MODULES: modules, NODE_ENV: 'production' });
  const errors: string[] = [];
  const app = await createApp({ config, writeOut: () => {}, writeErr: (text: string) => void errors.push(text) });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const base = await app.listen();
    // The server's side of a request ends when its response closes: the count waits for that too.
    let serverDone: () => void = () => {};
    app.server.on('request', (_request: IncomingMessage, response: ServerResponse) => response.once('close', () => serverDone()));
    const call = async (method: string, path: string, auth: string, body?: unknown): Promise<any> => {
      const ended = new Promise<void>((done) => (serverDone = done));
      const answer = await send(agent, base, method, path, auth, body);
      await ended;
      if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
      return answer.text === '' ? null : JSON.parse(answer.text);
    };

    const user = (await call('POST', '/admin/v1/users', TOKEN, { name: 'Counter', email: 'counter@example.com', role: 'creator' })).data;
    const made = await call('POST', '/admin/v1/keys', TOKEN, { user_id: user.id, permissions: ['read:listings', 'write:listings'] });
    const key = (made.data?.key ?? made.key) as string;
    let created = 0;
    const newListing = () => ({ title: `Listing ${++created}`, description: 'Counted lines', type: 'SKILL', price: 0 });
    for (let i = 0; i < SEEDED_LISTINGS; i++) await call('POST', '/v1/listings', key, newListing());
    const measured = kind === 'get' ? () => call('GET', '/v1/listings', key) : () => call('POST', '/v1/listings', key, newListing());
    for (let i = 0; i < WARM_UP; i++) await measured();

    const counted: { blocks: Map<string, Set<number>>; functions: Map<string, Set<number>> }[] = [];
    for (let run = 0; run < runs; run++) {
      // The access log writes its lines 20 ms after a request: the last request's write happens before the count.
      await new Promise((done) => setTimeout(done, 2 * ACCESS_LOG_FLUSH_MS));
      await session.post('Profiler.takePreciseCoverage'); // resets the counts
      await measured();
      const { result } = await session.post('Profiler.takePreciseCoverage');
      const scripts = result as ScriptCoverage[];
      counted.push({ blocks: await executedLines(session, scripts, 'blocks'), functions: await executedLines(session, scripts, 'functions') });
    }
    if (errors.length > 0) throw new Error(`the server wrote errors: ${errors.join('')}`);

    const sum = (files: Map<string, Set<number>>) => [...files.values()].reduce((total, lines) => total + lines.size, 0);
    const totals = counted.map(({ blocks, functions }) => ({ files: blocks.size, lines: sum(blocks), functionLines: sum(functions) }));
    const smallest = totals.indexOf(totals.reduce((least, run) => (run.lines < least.lines ? run : least)));
    const list = [...counted[smallest]!.blocks].map(([file, lines]) => ({ file, lines: lines.size, at: ranges(lines) })).sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
    return { request: kind, modules, ...totals[smallest]!, runs: totals, list };
  } finally {
    agent.destroy();
    await app.close(0);
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function send(agent: Agent, base: string, method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const outgoing = httpRequest(new URL(path, base), { method, agent, headers: { Authorization: `Bearer ${auth}`, ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, text }));
      response.on('error', fail);
    });
    outgoing.on('error', fail);
    outgoing.end(payload);
  });
}

const sources = new Map<string, { text: string; map: SourceMap | null }>();
let debuggerOn = false;

/**
 * The .ts lines under src/ (relative path → line numbers, 1-based) that ran, from one coverage
 * snapshot: by `blocks`, the code V8 ran; by `functions`, all the code of each function that ran.
 */
async function executedLines(session: Session, scripts: ScriptCoverage[], by: 'blocks' | 'functions'): Promise<Map<string, Set<number>>> {
  const executed = new Map<string, Set<number>>();
  for (const script of scripts) {
    if (!script.url.startsWith('file://') || !fileURLToPath(script.url).startsWith(SRC + '/')) continue;
    if (!script.functions.some((fn) => fn.ranges.some((range) => range.count > 0))) continue;
    const { text, map } = await compiled(session, script);
    const counts = innermostCounts(text.length, script, by);
    let line = 0;
    let column = 0;
    for (let offset = 0; offset < text.length; offset++) {
      const char = text.charCodeAt(offset);
      if (char === 10) {
        line++;
        column = 0;
        continue;
      }
      if (counts[offset]! > 0 && !isBlank(char)) {
        const origin: Partial<SourceMapping> = map === null ? {} : map.findEntry(line, column);
        if (origin.originalSource !== undefined && origin.originalLine !== undefined) {
          const path = origin.originalSource.startsWith('file://') ? fileURLToPath(origin.originalSource) : resolve(fileURLToPath(new URL('.', script.url)), origin.originalSource);
          if (path.startsWith(SRC + '/') && path.endsWith('.ts')) {
            const file = relative(SRC, path);
            let lines = executed.get(file);
            if (lines === undefined) executed.set(file, (lines = new Set()));
            lines.add(origin.originalLine + 1);
          }
        }
      }
      column++;
    }
  }
  return executed;
}

/** Line numbers as ranges: 3,4,5,9 → "3-5,9". */
function ranges(lines: Set<number>): string {
  const sorted = [...lines].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const first = sorted[i]!;
    while (sorted[i + 1] === sorted[i]! + 1) i++;
    parts.push(first === sorted[i] ? `${first}` : `${first}-${sorted[i]}`);
  }
  return parts.join(',');
}

function isBlank(char: number): boolean {
  return char === 32 || char === 9 || char === 13;
}

/** Each character's count: that of the innermost range around it (V8's ranges nest; a function's first range is the whole function). */
function innermostCounts(length: number, script: ScriptCoverage, by: 'blocks' | 'functions'): Int32Array {
  const ranges = by === 'blocks' ? script.functions.flatMap((fn) => fn.ranges) : script.functions.map((fn) => fn.ranges[0]!);
  // Outer before inner: by start, then the longer first; later (inner) ranges overwrite.
  ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  const counts = new Int32Array(length);
  for (const range of ranges) counts.fill(range.count, range.startOffset, Math.min(range.endOffset, length));
  return counts;
}

/** The JavaScript V8 ran for a script (tsx's output) and its inline source map. */
async function compiled(session: Session, script: ScriptCoverage): Promise<{ text: string; map: SourceMap | null }> {
  const known = sources.get(script.url);
  if (known !== undefined) return known;
  if (!debuggerOn) {
    await session.post('Debugger.enable');
    debuggerOn = true;
  }
  const { scriptSource: text } = await session.post('Debugger.getScriptSource', { scriptId: script.scriptId });
  const inline = /\/\/# sourceMappingURL=data:application\/json(?:;charset=[^;,]+)?;base64,([A-Za-z0-9+/=]+)\s*$/.exec(text);
  const map = inline === null ? null : new SourceMap(JSON.parse(Buffer.from(inline[1]!, 'base64').toString('utf8')));
  if (map === null) process.stderr.write(`no source map for ${script.url}: its lines are not counted\n`);
  const entry = { text, map };
  sources.set(script.url, entry);
  return entry;
}

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const kind = option('request', 'get');
  if (!(REQUESTS as readonly string[]).includes(kind)) throw new Error(`--request must be one of ${REQUESTS.join(', ')}`);
  const runs = Number(option('runs', '7'));
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a whole number above 0');
  const result = await measureExecutedLines(kind as RequestKind, option('modules', 'all'), runs);
  const { list, ...figures } = result;
  process.stdout.write(`${JSON.stringify(process.argv.includes('--list') ? result : figures)}\n`);
}
