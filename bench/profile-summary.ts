// Reads a V8 .cpuprofile (from `node --cpu-prof`) and lists where the time went: the functions
// with the most self time and the most inclusive time, in % of the busy (non-idle) samples.
// `npm run bench -- --profile` writes one per server start and prints this summary after it.
// Usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [--top 25]

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  name: string;
  selfPercent: number;
  totalPercent: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  /** Time in V8's garbage collector, in % of the busy time. */
  gcPercent: number;
  bySelf: HotSpot[];
  byTotal: HotSpot[];
}

const IDLE = '(idle)';
const REPO_DIR = `${import.meta.dirname}/..`;

/** "functionName file:line", with project files relative to the repository and node: internals shortened. */
function frameName(frame: ProfileNode['callFrame']): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  let file = frame.url.replace(/^file:\/\//, '');
  if (file.startsWith('/')) file = relative(REPO_DIR, file);
  // Code compiled by tsx reports line 0 for everything; the file name is then all there is.
  return frame.lineNumber > 0 ? `${name} ${file}:${frame.lineNumber + 1}` : `${name} ${file}`;
}

export function summariseProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const selfUs = new Map<number, number>();
  for (let index = 0; index < profile.samples.length; index++) {
    const id = profile.samples[index]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  let gc = 0;
  for (const [id, micros] of selfUs) {
    const node = byId.get(id);
    if (node === undefined || micros <= 0) continue;
    const name = frameName(node.callFrame);
    if (name === IDLE) {
      idle += micros;
      continue;
    }
    busy += micros;
    if (name === '(garbage collector)') gc += micros;
    self.set(name, (self.get(name) ?? 0) + micros);
    // Inclusive time: once per distinct function on the stack, so recursion is not counted twice.
    const seen = new Set<string>();
    for (let walk: number | undefined = id; walk !== undefined; walk = parentOf.get(walk)) {
      const frame = frameName(byId.get(walk)!.callFrame);
      if (seen.has(frame)) continue;
      seen.add(frame);
      total.set(frame, (total.get(frame) ?? 0) + micros);
    }
  }
  const rank = (values: Map<string, number>): HotSpot[] =>
    [...values]
      .sort((left, right) => right[1] - left[1])
      .slice(0, top)
      .map(([name]) => ({
        name,
        selfPercent: percent(self.get(name) ?? 0, busy),
        totalPercent: percent(total.get(name) ?? 0, busy),
      }));
  const ignoredInTotal = new Set(['(root)', '(program)']);
  const totals = new Map([...total].filter(([name]) => !ignoredInTotal.has(name)));
  return { busyMs: Math.round(busy / 1000), idleMs: Math.round(idle / 1000), gcPercent: percent(gc, busy), bySelf: rank(self), byTotal: rank(totals) };
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10;
}

export function profileMarkdown(title: string, summary: ProfileSummary): string {
  const rows = (spots: HotSpot[]): string[] => spots.map((spot) => `| ${spot.selfPercent.toFixed(1)} | ${spot.totalPercent.toFixed(1)} | \`${spot.name}\` |`);
  return [
    `### ${title}`,
    '',
    `Busy ${summary.busyMs.toLocaleString('en')} ms, idle ${summary.idleMs.toLocaleString('en')} ms; garbage collection ${summary.gcPercent.toFixed(1)}% of busy time.`,
    '',
    'By self time (% of busy time):',
    '',
    '| self % | total % | function |',
    '| ---: | ---: | --- |',
    ...rows(summary.bySelf),
    '',
    'By inclusive time:',
    '',
    '| self % | total % | function |',
    '| ---: | ---: | --- |',
    ...rows(summary.byTotal),
    '',
  ].join('\n');
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/**
 * The busiest of the .cpuprofile files a server wrote into `dir` (one per thread; tsx's loader
 * thread is nearly idle, so the busiest is the server's), summarised; null when there is none
 * (the server did not exit cleanly).
 */
export function busiestProfile(dir: string, top = 30): { file: string; summary: ProfileSummary } | null {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  const summaries = files.map((file) => ({ file, summary: summariseProfile(readProfile(join(dir, file)), top) }));
  summaries.sort((left, right) => right.summary.busyMs - left.summary.busyMs);
  return summaries[0] ?? null;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
  if (positionals.length === 0) {
    console.error('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [--top 25]');
    process.exit(2);
  }
  for (const file of positionals) process.stdout.write(`${profileMarkdown(file, summariseProfile(readProfile(file), Number(values.top)))}\n`);
}
