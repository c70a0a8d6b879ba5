// A real server on 127.0.0.1 port 0 for HTTP tests, with helpers to make users and keys
// through the operator API and to send requests. Each test gets its own app and data, and
// fails when its server answered a 5xx the test did not expect or logged an error, whether or
// not the test looked at that answer.

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, type TestContext } from 'node:test';
import { createApp, type App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildOpenApiDocument } from '../../src/openapi/document.ts';
import type { FileSystem } from '../../src/store/files.ts';
import type { CompactionHooks } from '../../src/store/store.ts';
import { httpRequest } from './http-request.ts';
import { TEST_CATCH_UP_WAIT_MS } from './catch-up-wait.ts';
import { AnswerChecker } from './openapi-answers.ts';

export const ADMIN_TOKEN = 'test-operator-token-0123456789';

/**
 * scrypt's N for passwords set in tests: 2^10 (1 MiB, about a millisecond) instead of the
 * server's 2^15, so the suite's hundreds of sign-ups and sign-ins cost little CPU. The same code
 * runs; tests about password work itself (the scrypt queue, bursts of sign-ins) pass
 * `config: { passwordCost: DEFAULT_PASSWORD_COST }` to get the real cost.
 */
export const TEST_PASSWORD_COST = 2 ** 10;

export interface TestResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or null when there is none. */
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface StartOptions {
  /** A directory to keep (for restarts); a fresh temporary one otherwise. `null` = :memory:. */
  dataDir?: string | null;
  env?: Record<string, string>;
  clock?: Clock;
  fileSystem?: FileSystem;
  /** Moments where the store's compaction is held (src/store/log.ts CompactionHooks). */
  compactionHooks?: CompactionHooks;
  /** Collects what the server writes (access log, warnings) instead of printing it. */
  output?: string[];
  /** Settings laid over the environment's (e.g. back-end URLs). */
  config?: Partial<Config>;
  /**
   * 5xx statuses this test provokes on purpose (e.g. [503] under disk faults). Any other 5xx,
   * and any error the server logs, fails the test when it ends.
   */
  expectedServerErrors?: readonly number[];
}

export class TestServer {
  readonly app: App;
  readonly url: string;
  readonly dataDir: string | null;
  private answerChecker: AnswerChecker | null = null;
  /**
   * This server's connections, kept alive between requests as fetch's pool keeps them. With a
   * timeout set, Node's agent drops an idle connection a second before the server's announced
   * `Keep-Alive: timeout=5`, rather than send on one the server is closing.
   */
  private readonly agent = new Agent({ keepAlive: true, timeout: 60_000 });

  constructor(app: App, url: string, dataDir: string | null) {
    this.app = app;
    this.url = url;
    this.dataDir = dataDir;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization ??= `Bearer ${options.key}`;
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await httpRequest(this.agent, this.url + path, method, headers, body);
    const text = response.text;
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    if (parsed !== null && response.headers.get('content-type')?.startsWith('application/json')) this.checkAgainstDocument(method, path, response.status, parsed);
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  /**
   * Every JSON answer a test receives must match the served OpenAPI document (status documented,
   * body valid, `required` fields present), so the document cannot promise what the server does not do.
   */
  private checkAgainstDocument(method: string, path: string, status: number, body: unknown): void {
    this.answerChecker ??= new AnswerChecker(buildOpenApiDocument(this.app.documentedRoutes));
    const problems = this.answerChecker.problems(method, path, status, body);
    if (problems.length > 0) throw new Error(`The answer departs from the OpenAPI document:\n  ${problems.join('\n  ')}`);
  }

  admin(method: string, path: string, body?: unknown): Promise<TestResponse> {
    return this.request(method, path, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  }

  /** A user made through the operator API. */
  async createUser(fields: { name?: string; role?: 'creator' | 'member'; email?: string } = {}): Promise<{ id: string; [field: string]: unknown }> {
    const response = await this.admin('POST', '/admin/v1/users', { name: fields.name ?? 'Test User', role: fields.role ?? 'member', ...(fields.email ? { email: fields.email } : {}) });
    if (response.status !== 201) throw new Error(`creating a user failed: ${response.status} ${response.text}`);
    return response.body.data;
  }

  /** A key made through the operator API; returns the plain key and the key's record view. */
  async createKey(userId: string, fields: { permissions?: string[]; rate_limit?: number; name?: string; prefix?: 'mk' | 'live' } = {}): Promise<{ key: string; id: string; [field: string]: unknown }> {
    const response = await this.admin('POST', '/admin/v1/keys', { user_id: userId, ...fields });
    if (response.status !== 201) throw new Error(`creating a key failed: ${response.status} ${response.text}`);
    return response.body.data;
  }

  /** A user with the given role and one key with the given permissions. */
  async userWithKey(role: 'creator' | 'member', permissions: string[], rateLimit = 1000): Promise<{ userId: string; key: string; keyId: string }> {
    const user = await this.createUser({ role, name: `${role} user` });
    const key = await this.createKey(user.id, { permissions, rate_limit: rateLimit });
    return { userId: user.id, key: key.key, keyId: key.id };
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await this.app.close(2_000);
  }
}

/** Starts a server; it is closed (and its temporary data dir removed) when the test ends. */
export async function startServer(t: TestContext | null, options: StartOptions = {}): Promise<TestServer> {
  let dataDir: string | null;
  let ownsDir = false;
  if (options.dataDir === undefined) {
    dataDir = mkdtempSync(join(tmpdir(), 'marketplace-test-'));
    ownsDir = true;
  } else dataDir = options.dataDir;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir ?? ':memory:',
    MARKETPLACE_DEMO: '0',
    MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN,
    ACCESS_LOG: options.output ? '1' : '0',
    // The suite's core tests run again with the modules left out (test/foundation/modules.test.ts).
    ...(process.env.MARKETPLACE_TEST_MODULES ? { MARKETPLACE_MODULES: process.env.MARKETPLACE_TEST_MODULES } : {}),
    ...options.env,
  });
  config.passwordCost = TEST_PASSWORD_COST;
  config.catchUpWaitMs = TEST_CATCH_UP_WAIT_MS;
  Object.assign(config, options.config);
  const sink = options.output;
  const app = await createApp({
    config,
    clock: options.clock,
    fileSystem: options.fileSystem,
    compactionHooks: options.compactionHooks,
    writeOut: sink ? (text) => void sink.push(text) : () => {},
    writeErr: (text) => {
      sink?.push(text);
      if (text.startsWith('error:')) unexpected.push(`logged: ${text.trim()}`);
    },
  });
  const expected = new Set(options.expectedServerErrors ?? []);
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', () => {
      if (res.statusCode >= 500 && !expected.has(res.statusCode)) unexpected.push(`answered ${res.statusCode} to ${req.method} ${req.url}`);
    });
  });
  const url = await app.listen();
  const server = new TestServer(app, url, dataDir);
  t?.after(async () => {
    await server.close();
    if (ownsDir && dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return server;
}

/** What servers started by this file did wrong since the last test ended. */
const unexpected: string[] = [];

// After each test and all its own `after` hooks (so its servers are closed and every answer is
// in): a hook that throws fails the test, and a separate one skips none of the test's clean-ups.
afterEach(() => {
  const found = unexpected.splice(0);
  if (found.length > 0) {
    throw new Error(`The server failed during this test (pass expectedServerErrors if that is the point):\n${found.slice(0, 10).join('\n')}`);
  }
});

/** A temporary directory removed when the test ends (for restart tests that reuse one dir). */
export function temporaryDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
