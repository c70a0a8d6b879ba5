// The real process (src/main.ts) as a self-hoster starts it, on a free port, for tests that need
// the whole program: its output, its signals, its exit.

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from './eventually.ts';

export interface Running {
  child: ChildProcess;
  output: () => string;
  url: string;
}

/** Starts src/main.ts with `env` (and `nodeArgs` for node itself); resolves once it prints where it listens. */
export function startMain(env: Record<string, string>, nodeArgs: string[] = []): Promise<Running> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ACCESS_LOG: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk) => (text += chunk));
  child.stderr!.on('data', (chunk) => (text += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening on" line in time:\n${text}`)), 120_000);
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve({ child, output: () => text, url: match[1]! });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${text}`));
    });
  });
}

/**
 * Asks a process started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>` for a heap
 * snapshot and resolves its text once the file is whole (it parses).
 */
export async function heapSnapshot(child: ChildProcess, dir: string): Promise<string> {
  child.kill('SIGUSR2');
  let snapshot = '';
  await eventually(async () => {
    const [name] = readdirSync(dir).filter((file) => file.endsWith('.heapsnapshot'));
    if (name === undefined) return false;
    snapshot = readFileSync(join(dir, name), 'utf8');
    try {
      JSON.parse(snapshot); // whole, not still being written
      return true;
    } catch {
      return false;
    }
  }, 30_000, 'a heap snapshot');
  return snapshot;
}
