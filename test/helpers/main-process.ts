// The real process (src/main.ts) as a self-hoster starts it, on a free port, for tests that need
// the whole program: its output, its signals, its exit.

import { spawn, type ChildProcess } from 'node:child_process';

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
