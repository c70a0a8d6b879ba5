// Runs every curl example of the README against a fresh demo server and checks that each one
// answers with its documented status: the status written after it as `# → 404`, else any 2xx.
// Usage: npm run check:readme -- [README.md] [--strict] — exit 0 when all pass.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { seedDemo } from '../../src/demo.ts';

/** One curl command line of the README, continuation lines joined. */
export interface CurlExample {
  /** 1-based line in the markdown where the command starts. */
  line: number;
  text: string;
  /** The documented status, or null for "any 2xx". */
  expected: number | null;
}

/** A line a block needs to run (a curl, or a variable the next curls use), in README order. */
interface ShellLine {
  line: number;
  text: string;
  curl: CurlExample | null;
}

export interface Placeholders {
  baseUrl: string;
  apiKey: string;
  /** README id (e.g. lst_FroJX…) or `lst_…` → a real id of the same kind. */
  ids: Record<'lst' | 'usr' | 'key' | 'wh', string[]>;
}

export interface ExampleResult {
  example: CurlExample;
  statuses: number[];
  ok: boolean;
  /** Why it was not run (it still shows an illustrative `…`), when skipped. */
  skipped: string | null;
  stderr: string;
}

const README_ORIGIN = 'http://127.0.0.1:3000';
const STATUS_NOTE = /#\s*→\s*(\d{3})\b/;
const SHELL_FENCE = /^```(sh|bash|shell|console)\s*$/;
/** A variable assignment the following curls may use (USER_ID=$(curl …), export KEY=…). */
const ASSIGNMENT = /^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=/;

/** The shell lines of every sh/bash block: curls and the assignments around them. */
export function extractShellLines(markdown: string): ShellLine[] {
  const lines = markdown.split('\n');
  const result: ShellLine[] = [];
  let inBlock = false;
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index]!;
    if (!inBlock) {
      inBlock = SHELL_FENCE.test(raw.trim());
      continue;
    }
    if (raw.trim() === '```') {
      inBlock = false;
      continue;
    }
    const start = index;
    let text = raw;
    while (text.trimEnd().endsWith('\\') && index + 1 < lines.length) {
      index += 1;
      text = text.trimEnd().slice(0, -1) + ' ' + lines[index]!.trim();
    }
    const trimmed = text.trim();
    const isCurl = /(^|[\s$(|;&])curl\s/.test(trimmed);
    if (!isCurl && !ASSIGNMENT.test(trimmed)) continue;
    const note = STATUS_NOTE.exec(trimmed);
    result.push({
      line: start + 1,
      text: trimmed,
      curl: isCurl ? { line: start + 1, text: trimmed, expected: note ? Number(note[1]) : null } : null,
    });
  }
  return result;
}

/**
 * Replaces the README's example values with working ones: base URL, key, and ids by kind. The
 * same README id maps to the same real id in every command of one run.
 */
export function makeSubstituter(placeholders: Placeholders): (text: string) => string {
  const mappings = new Map<string, string>();
  const kinds = ['lst', 'usr', 'key', 'wh'] as const;
  return (text) => {
    let out = text.split(README_ORIGIN).join(placeholders.baseUrl).replace(/market_live_…/g, placeholders.apiKey);
    for (const kind of kinds) {
      const pool = placeholders.ids[kind];
      out = out.replace(new RegExp(`\\b${kind}_(…|[A-Za-z0-9]{20})`, 'g'), (found) => {
        let real = mappings.get(found);
        if (real === undefined) {
          const used = [...mappings.keys()].filter((key) => key.startsWith(`${kind}_`)).length;
          real = pool[used % Math.max(1, pool.length)] ?? found;
          mappings.set(found, real);
        }
        return real;
      });
    }
    return out;
  };
}

/** Shell functions: curl reports its status on stderr (keeping stdout clean for pipes), and stand-ins for tools a machine may lack. */
const PRELUDE = String.raw`
__example() { printf '@@example %s\n' "$1" >&2; }
curl() { command curl --silent --show-error --max-time 10 --write-out '%{stderr}@@status %{http_code}\n' "$@"; }
command -v uuidgen >/dev/null 2>&1 || uuidgen() { node -e 'console.log(crypto.randomUUID())'; }
command -v jq >/dev/null 2>&1 || jq() {
  node -e '
    const args = process.argv.slice(1).filter((arg) => arg !== "-r");
    const path = (args[0] ?? ".").split(".").filter(Boolean);
    let value = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const name of path) value = value?.[name];
    console.log(typeof value === "string" && process.argv.includes("-r") ? value : JSON.stringify(value, null, 2));
  ' "$@";
}
`;

/** Runs the README's shell lines in one bash session (so variables carry over) and checks each curl. */
export async function runExamples(markdown: string, placeholders: Placeholders, cwd: string, env: Record<string, string>): Promise<ExampleResult[]> {
  const substitute = makeSubstituter(placeholders);
  const shellLines = extractShellLines(markdown);
  const results: ExampleResult[] = [];
  const script: string[] = [PRELUDE];
  for (const shellLine of shellLines) {
    const text = substitute(shellLine.text);
    // Still an ellipsis: an illustration (`curl -H "X-API-Key: $KEY" …`), not a command.
    const skipped = text.includes('…') ? 'it still holds "…" after the placeholders were filled in' : null;
    if (shellLine.curl) {
      results.push({ example: shellLine.curl, statuses: [], ok: false, skipped, stderr: '' });
      if (skipped === null) script.push(`__example ${results.length - 1}`, text);
    } else if (skipped === null) {
      script.push(text);
    }
  }
  const stderr = await runBash(script.join('\n'), cwd, env);
  let current: ExampleResult | null = null;
  for (const line of stderr.split('\n')) {
    const example = /^@@example (\d+)$/.exec(line);
    const status = /^@@status (\d{3})$/.exec(line);
    if (example) current = results[Number(example[1])] ?? null;
    else if (status && current) current.statuses.push(Number(status[1]));
    else if (current && line.trim() !== '') current.stderr += line + '\n';
  }
  for (const result of results) {
    if (result.skipped !== null) continue;
    const expected = result.example.expected;
    result.ok =
      result.statuses.length > 0 &&
      result.statuses.every((status) => (expected === null ? status >= 200 && status < 300 : status === expected));
  }
  return results;
}

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(stderr));
  });
}

interface DemoServer {
  baseUrl: string;
  placeholders: Placeholders;
  env: Record<string, string>;
  cwd: string;
  close(): Promise<void>;
}

/** A demo server as `npm start` makes it on a fresh clone: seeded data, a generated operator token in data/admin-token. */
async function startDemoServer(): Promise<DemoServer> {
  const cwd = mkdtempSync(join(tmpdir(), 'marketplace-readme-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(cwd, 'data'), MARKETPLACE_DEMO: '1', ACCESS_LOG: '0' });
  const app = await createApp({ config, writeOut: () => {}, writeErr: () => {} });
  const demoKeys = await seedDemo(app.store, systemClock, config.brand);
  const baseUrl = await app.listen();
  const apiKey = demoKeys[0]!.key;
  const call = async (path: string, init: RequestInit = {}, token = apiKey) => {
    const response = await fetch(baseUrl + path, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    });
    return (await response.json()) as { data: unknown };
  };
  const me = (await call('/v1/users/me')).data as { id: string };
  const listings = (await call(`/v1/listings?owner_id=${me.id}`)).data as Array<{ id: string }>;
  const users = (await call('/admin/v1/users', {}, app.adminToken)).data as Array<{ id: string }>;
  // A spare key and webhook, so examples that change or remove one do not break the demo key.
  const spareKey = (await call('/admin/v1/keys', { method: 'POST', body: JSON.stringify({ user_id: me.id, name: 'readme example' }) }, app.adminToken)).data as { id: string };
  const webhook = (await call('/v1/webhooks', { method: 'POST', body: JSON.stringify({ url: 'https://example.com/readme-hook' }) })).data as { id?: string } | undefined;
  return {
    baseUrl,
    cwd,
    env: { KEY: apiKey, ADMIN_TOKEN: app.adminToken },
    placeholders: {
      baseUrl,
      apiKey,
      ids: {
        lst: listings.map((listing) => listing.id),
        usr: [me.id, ...users.map((user) => user.id).filter((id) => id !== me.id)],
        key: [spareKey.id],
        wh: webhook?.id ? [webhook.id] : [],
      },
    },
    async close() {
      await app.close(1_000);
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const strict = argv.includes('--strict');
  const file = argv.find((arg) => !arg.startsWith('--')) ?? 'README.md';
  const markdown = readFileSync(file, 'utf8');
  const server = await startDemoServer();
  let results: ExampleResult[];
  try {
    results = await runExamples(markdown, server.placeholders, server.cwd, server.env);
  } finally {
    await server.close();
  }
  let failures = 0;
  for (const result of results) {
    const where = `${file}:${result.example.line}`;
    const expected = result.example.expected === null ? '2xx' : String(result.example.expected);
    if (result.skipped !== null) {
      if (strict) failures += 1;
      process.stdout.write(`${strict ? 'FAIL' : 'skip'} ${where} (${result.skipped}): ${result.example.text}\n`);
    } else if (result.ok) {
      process.stdout.write(`ok   ${where} ${result.statuses.join(',')}: ${result.example.text}\n`);
    } else {
      failures += 1;
      process.stdout.write(`FAIL ${where} expected ${expected}, got ${result.statuses.join(',') || 'no answer'}: ${result.example.text}\n`);
      if (result.stderr) process.stdout.write(result.stderr.replace(/^/gm, '       '));
    }
  }
  const ran = results.filter((result) => result.skipped === null).length;
  process.stdout.write(`${results.length} curl examples: ${ran} run, ${results.length - ran} illustrative, ${failures} failed\n`);
  return failures === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
