// How long a portal sign-in takes while another address floods sign-ins: the real server
// (src/main.ts, its own process, TRUST_PROXY so that X-Forwarded-For names each client), one
// "flooding" address keeping `--connections` wrong sign-ins in flight at all times (each answered
// one is sent again at once, to emails that exist or not), and one user on another address signing in with her
// right password, one attempt after another. Each trial measures her sign-ins alone, then with
// the flood; the figure is the median loaded time against the median unloaded time (goal ≤ 3×).
// With two cores, the server is pinned to one and this process to the other when taskset exists
// (unless --no-pin).
// With --blocked the flooding address has used up its failure limit before the flood starts
// (100 wrong API keys), so every one of its attempts is a 429 with no scrypt: what is left is
// the cost of answering the flood itself.
// Usage: node --import tsx bench/sign-in-flood.ts [--trials 5] [--seconds 10] [--connections 200] [--no-pin] [--blocked]

import { spawn, spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { trials: { type: 'string', default: '5' }, seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '200' }, 'no-pin': { type: 'boolean', default: false }, blocked: { type: 'boolean', default: false } },
});
const trials = Number(values.trials);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ADMIN = 'bench-operator-token-0123456789';
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const FLOODER = '203.0.113.66';
const USER_ADDRESS = '198.51.100.7';

const pinned = !values['no-pin'] && availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (pinned) spawnSync('taskset', ['-pc', '1', String(process.pid)]);

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

const agent = new Agent({ keepAlive: true, maxSockets: connections + 10 });

function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, base), { method, agent, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: text, headers: response.headers }));
    });
    outgoing.on('error', reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function startServer(): Promise<{ url: string; stop: () => void }> {
  const command = pinned ? 'taskset' : process.execPath;
  const args = [...(pinned ? ['-c', '0', process.execPath] : []), '--import', 'tsx', MAIN];
  const child = spawn(command, args, {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: ADMIN, ACCESS_LOG: '0', TRUST_PROXY: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${text}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;

/** Her sign-ins, one after another, for `durationMs` (at least 3): each one's time in ms. */
async function signIns(base: string, email: string, password: string, durationMs: number): Promise<number[]> {
  const times: number[] = [];
  const until = performance.now() + durationMs;
  while (times.length < 3 || performance.now() < until) {
    const started = performance.now();
    const answer = await call(base, 'POST', '/portal/v1/session', { origin: base, 'x-forwarded-for': USER_ADDRESS }, { email, password });
    if (answer.status !== 201) throw new Error(`her sign-in failed: ${answer.status} ${answer.body}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** Keeps `connections` wrong sign-ins in flight from one address until `stop` resolves; counts answers by status. */
function flood(base: string, stop: Promise<void>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let stopped = false;
  void stop.then(() => (stopped = true));
  let sent = 0;
  const loop = async () => {
    while (!stopped) {
      sent += 1;
      const answer = await call(base, 'POST', '/portal/v1/session', { origin: base, 'x-forwarded-for': FLOODER }, { email: `flood-${sent % 500}@example.com`, password: `a wrong guess ${sent}` });
      counts[answer.status] = (counts[answer.status] ?? 0) + 1;
    }
  };
  return Promise.all(Array.from({ length: connections }, loop)).then(() => counts);
}

const results: Array<{ unloaded: number; loaded: number; ratio: number; floodPerSecond: number; counts: Record<string, number> }> = [];
for (let trial = 1; trial <= trials; trial += 1) {
  const server = await startServer();
  try {
    const email = `bench-user-${trial}@example.com`;
    const password = 'correct horse battery staple';
    const user = await call(server.url, 'POST', '/admin/v1/users', { authorization: `Bearer ${ADMIN}` }, { name: 'Bench user', email });
    const id = JSON.parse(user.body).data.id;
    const invitation = await call(server.url, 'POST', `/admin/v1/users/${id}/invitations`, { authorization: `Bearer ${ADMIN}` });
    const set = await call(server.url, 'POST', '/portal/v1/password', { origin: server.url, 'x-forwarded-for': USER_ADDRESS }, { invitation: JSON.parse(invitation.body).data.token, password });
    if (set.status !== 201) throw new Error(`setting her password failed: ${set.status} ${set.body}`);

    if (values.blocked) {
      for (let index = 0; index < 100; index += 1) await call(server.url, 'GET', '/v1/listings', { authorization: 'Bearer market_live_not-a-real-key', 'x-forwarded-for': FLOODER });
    }
    const unloaded = median(await signIns(server.url, email, password, 2_000));
    let endFlood!: () => void;
    const stop = new Promise<void>((resolve) => (endFlood = resolve));
    const started = performance.now();
    const flooding = flood(server.url, stop);
    // The flood first reaches its steady state (its address's failure limit full), then she signs in while it goes on.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const loaded = median(await signIns(server.url, email, password, seconds * 1000));
    endFlood();
    const counts = await flooding;
    const floodSeconds = (performance.now() - started) / 1000;
    const answered = Object.values(counts).reduce((sum, count) => sum + count, 0);
    results.push({ unloaded, loaded, ratio: loaded / unloaded, floodPerSecond: answered / floodSeconds, counts });
    console.log(`trial ${trial}: her sign-in ${unloaded.toFixed(1)} ms alone, ${loaded.toFixed(1)} ms during the flood (${(loaded / unloaded).toFixed(2)}×); the flood: ${Math.round(answered / floodSeconds)} answers/s ${JSON.stringify(counts)}`);
  } finally {
    server.stop();
  }
}
agent.destroy();
const ratio = median(results.map((result) => result.ratio));
console.log(
  `median of ${trials} trials: her sign-in ${median(results.map((result) => result.unloaded)).toFixed(1)} ms alone, ${median(results.map((result) => result.loaded)).toFixed(1)} ms during a flood of ${connections} connections from one address ${values.blocked ? ', its failure limit used up' : ''} (${ratio.toFixed(2)}×, goal ≤ 3×)${pinned ? '; server pinned to CPU 0, clients to CPU 1' : ''}`,
);
