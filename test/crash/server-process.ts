// The real server as a child process (`node --import tsx src/main.ts`, phase-server.ts to hold
// its compactions at one phase, or quota-server.ts to save counts often), for the crash tests:
// start it on port 0, wait for its "listening on" line, and SIGKILL it.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
/** Only bounds how long a start that hangs takes to fail: several tsx starts at once on a busy machine take tens of seconds. */
const STARTUP_TIMEOUT_MS = 120_000;

export interface ServerOptions {
  dataDir: string;
  operatorToken: string;
  /** Hold every compaction for good at this phase (test/crash/phase-server.ts); the plain server otherwise. */
  holdCompactionAt?: string | null;
  /** Another entry file (relative to the repository), and settings for it, e.g. test/crash/quota-server.ts. */
  entry?: string;
  env?: Record<string, string>;
}

/** One run of the server, from spawn to its death. */
export class ServerProcess {
  readonly child: ChildProcess;
  /** Everything it wrote on stderr (warnings: torn tails, discarded temp files). */
  stderr = '';
  stdout = '';
  url: string | null = null;
  private readonly exited: Promise<void>;

  constructor(options: ServerOptions) {
    const inherited = { ...process.env };
    // Coverage of a SIGKILLed child is never written; do not let it try.
    delete inherited.NODE_V8_COVERAGE;
    const hold = options.holdCompactionAt ?? null;
    const entry = options.entry ?? (hold === null ? 'src/main.ts' : 'test/crash/phase-server.ts');
    this.child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: REPO_ROOT,
      env: {
        ...inherited,
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: options.dataDir,
        MARKETPLACE_DEMO: '0',
        MARKETPLACE_ADMIN_TOKEN: options.operatorToken,
        ACCESS_LOG: '0',
        WEBHOOK_ALLOW_PRIVATE: '1',
        WEBHOOK_RETRY_DELAYS_MS: '60000',
        ...(hold === null ? {} : { CRASH_HOLD_PHASE: hold }),
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = once(this.child, 'exit').then(() => undefined);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the base URL once the server prints it; rejects if it exits or hangs first. */
  async ready(): Promise<string> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (this.url === null) {
      const match = /listening on (http:\/\/\S+)/.exec(this.stdout);
      if (match) {
        this.url = match[1]!;
        break;
      }
      if (!this.running) {
        throw new Error(`the server exited (code ${this.child.exitCode}, signal ${this.child.signalCode}) before listening: ${this.stderr.trim().slice(-2000)}`);
      }
      if (Date.now() > deadline) throw new Error(`the server did not listen within ${STARTUP_TIMEOUT_MS} ms: ${this.stderr.trim().slice(-2000)}`);
      await new Promise((done) => setTimeout(done, 10));
    }
    return this.url;
  }

  /** SIGKILL: no shutdown code runs; whatever the process had not written is gone. */
  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }
}
