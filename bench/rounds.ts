// Runs a scenario as alternating rounds over its targets (server and baselines, with the
// order rotated each round so machine noise and position in the round hit all alike), then
// reduces the rounds to medians, ratios and goal verdicts.

import { statsDelta } from './api.ts';
import { drive, type GeneratorName, type Measurement } from './drive.ts';
import { cpuSeconds, machineBusySeconds, RssPeak, selfAndChildrenCpuSeconds, waitIdle } from './processes.ts';
import type { Goal, Scenario, TargetName } from './scenarios.ts';

export interface Target {
  name: TargetName;
  baseUrl: string;
  pid: number;
  /** Called before each round: returns the headers its requests carry (e.g. a fresh key). */
  prepare(scenario: Scenario): Promise<string[]>;
  /** Store counters, for the server only. */
  stats?: () => Promise<Record<string, unknown> | null>;
}

export interface RoundSettings {
  generator: GeneratorName;
  rounds: number;
  durationS: number;
  warmupS: number;
  /** taskset CPU list for the load generator (null: not pinned). */
  generatorCpus: string | null;
  log: (line: string) => void;
}

export interface RoundResult {
  round: number;
  rps: number;
  /** Answers per second with the scenario's expected status (for D: acknowledged writes). */
  expectedRps: number;
  requests: number;
  expected: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  unexpected_status: number;
  statuses: Record<string, number> | null;
  socket_errors: number;
  rss_peak_bytes: number | null;
  cpu_us_per_request: number | null;
  cpu_percent: number | null;
  /**
   * CPU (in % of one core) that processes other than the target, the load generator and the
   * bench itself used during the round: other work on the machine that may have skewed it.
   */
  other_cpu_percent: number | null;
  stats_delta: Record<string, number> | null;
}

export interface TargetSummary {
  rounds: RoundResult[];
  median_rps: number;
  median_expected_rps: number;
  p50_ms: number;
  p99_ms: number;
  rss_peak_mib: number | null;
  cpu_us_per_request: number | null;
  cpu_percent: number | null;
  other_cpu_percent: number | null;
  unexpected_status: number;
  socket_errors: number;
}

export interface GoalVerdict {
  label: string;
  value: number | null;
  ok: boolean | null;
}

export interface ScenarioResult {
  id: string;
  title: string;
  connections: number;
  targets: Partial<Record<TargetName, TargetSummary>>;
  /** Against the same-bytes baseline (the server's own answers replayed by bare node:http). */
  ratio_same: number | null;
  /** Against the group-commit baseline (scenario D: bare node:http appending the server's own log line per write). */
  ratio_group: number | null;
  ratio_ceiling: number | null;
  ratio_naive: number | null;
  /** The same ratios from CPU time per request (baseline µs ÷ server µs): steadier on a noisy machine. */
  cpu_ratio_same: number | null;
  cpu_ratio_group: number | null;
  cpu_ratio_ceiling: number | null;
  cpu_ratio_naive: number | null;
  fsyncs_per_write: number | null;
  /** The same for the group-commit baseline, from its own counters. */
  group_fsyncs_per_write: number | null;
  store_ops_per_write: number | null;
  /** The --variant server against the main one: req/s ratio and extra CPU µs per request. */
  variant: { ratio_rps: number | null; cpu_us_difference: number | null } | null;
  goals: GoalVerdict[];
  /** Another scenario of the same run this one is reported against (the report computes the ratio). */
  compared_with: { id: string; atLeast: number } | null;
}

/** Other processes using this much of a core during a round make its figures doubtful. */
export const BUSY_MACHINE_PERCENT = 15;

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function expectedCount(measurement: Measurement, expectStatus: number): number {
  if (measurement.statuses !== null) return measurement.statuses[String(expectStatus)] ?? 0;
  // wrk only tells 2xx/3xx from the rest, so a 429 scenario counts its non-2xx answers.
  return expectStatus >= 400 ? measurement.non2xx : measurement.requests - measurement.non2xx;
}

async function runRound(target: Target, scenario: Scenario, round: number, settings: RoundSettings): Promise<RoundResult> {
  const headers = await target.prepare(scenario);
  const common = {
    generator: settings.generator,
    baseUrl: target.baseUrl,
    requestsFile: scenario.requestsFile,
    headers,
    connections: scenario.connections,
    cpus: settings.generatorCpus,
  };
  await waitIdle(target.pid);
  if (settings.warmupS > 0) await drive({ ...common, durationS: settings.warmupS });
  // Let the warm-up's last answers (and, for writes, their fsyncs) land before counting.
  await waitIdle(target.pid);
  const statsBefore = target.stats ? await target.stats() : null;
  const cpuBefore = cpuSeconds(target.pid);
  const machineBefore = machineBusySeconds();
  const benchBefore = selfAndChildrenCpuSeconds();
  const rss = new RssPeak(target.pid);
  const measurement = await drive({ ...common, durationS: settings.durationS });
  const cpuAfter = cpuSeconds(target.pid);
  const machineAfter = machineBusySeconds();
  const benchAfter = selfAndChildrenCpuSeconds();
  const rssPeak = rss.stop();
  await waitIdle(target.pid);
  const statsAfter = target.stats ? await target.stats() : null;

  const expected = expectedCount(measurement, scenario.expectStatus);
  const cpuUsed = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  const otherUsed =
    cpuUsed === null || machineBefore === null || machineAfter === null || benchBefore === null || benchAfter === null
      ? null
      : Math.max(0, machineAfter - machineBefore - cpuUsed - (benchAfter - benchBefore));
  return {
    round,
    rps: measurement.rps,
    expectedRps: measurement.requests === 0 ? 0 : Math.round((measurement.rps * expected) / measurement.requests),
    requests: measurement.requests,
    expected,
    p50_ms: measurement.p50Ms,
    p90_ms: measurement.p90Ms,
    p99_ms: measurement.p99Ms,
    max_ms: measurement.maxMs,
    unexpected_status: measurement.requests - expected,
    statuses: measurement.statuses,
    socket_errors: measurement.socketErrors,
    rss_peak_bytes: rssPeak,
    cpu_us_per_request: cpuUsed === null || measurement.requests === 0 ? null : round2((cpuUsed * 1e6) / measurement.requests),
    cpu_percent: cpuUsed === null ? null : Math.round((cpuUsed / measurement.seconds) * 100),
    other_cpu_percent: otherUsed === null ? null : Math.round((otherUsed / measurement.seconds) * 100),
    stats_delta: statsBefore === null || statsAfter === null ? null : statsDelta(statsBefore, statsAfter),
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function summarise(rounds: RoundResult[]): TargetSummary {
  const peaks = rounds.map((round) => round.rss_peak_bytes).filter((value): value is number => value !== null);
  const cpu = rounds.map((round) => round.cpu_us_per_request).filter((value): value is number => value !== null);
  const cpuPercent = rounds.map((round) => round.cpu_percent).filter((value): value is number => value !== null);
  const otherPercent = rounds.map((round) => round.other_cpu_percent).filter((value): value is number => value !== null);
  return {
    rounds,
    median_rps: Math.round(median(rounds.map((round) => round.rps))),
    median_expected_rps: Math.round(median(rounds.map((round) => round.expectedRps))),
    p50_ms: round2(median(rounds.map((round) => round.p50_ms))),
    p99_ms: round2(median(rounds.map((round) => round.p99_ms))),
    rss_peak_mib: peaks.length === 0 ? null : Math.round(Math.max(...peaks) / 1048576),
    cpu_us_per_request: cpu.length === 0 ? null : round2(median(cpu)),
    cpu_percent: cpuPercent.length === 0 ? null : Math.round(median(cpuPercent)),
    other_cpu_percent: otherPercent.length === 0 ? null : Math.round(median(otherPercent)),
    unexpected_status: rounds.reduce((sum, round) => sum + round.unexpected_status, 0),
    socket_errors: rounds.reduce((sum, round) => sum + round.socket_errors, 0),
  };
}

/** Σ delta of one stats counter over the rounds, or null when the server did not report it. */
function counterTotal(rounds: RoundResult[], name: string): number | null {
  if (rounds.some((round) => round.stats_delta === null)) return null;
  return rounds.reduce((sum, round) => sum + (round.stats_delta?.[name] ?? 0), 0);
}

/** fsyncs over acknowledged writes, summed over the rounds, from the target's store counters. */
function fsyncsPerWrite(summary: TargetSummary): number | null {
  const fsyncs = counterTotal(summary.rounds, 'store.fsyncs');
  const acknowledged = summary.rounds.reduce((sum, round) => sum + round.expected, 0);
  return fsyncs !== null && acknowledged > 0 ? Math.round((fsyncs / acknowledged) * 1000) / 1000 : null;
}

function judge(goal: Goal, values: Record<Goal['metric'], number | null>): GoalVerdict {
  const value = values[goal.metric];
  if (value === null || Number.isNaN(value)) return { label: goal.label, value: null, ok: null };
  const ok = (goal.atLeast === undefined || value >= goal.atLeast) && (goal.atMost === undefined || value <= goal.atMost);
  return { label: goal.label, value, ok };
}

export async function runScenario(scenario: Scenario, targets: Target[], settings: RoundSettings): Promise<ScenarioResult> {
  // In the scenario's order (server, then a variant next to it, then the baselines), rotated each round.
  const taking = scenario.targets.flatMap((name) => targets.filter((target) => target.name === name));
  const rounds = new Map<TargetName, RoundResult[]>(taking.map((target) => [target.name, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    const shift = (round - 1) % taking.length;
    for (const target of [...taking.slice(shift), ...taking.slice(0, shift)]) {
      const result = await runRound(target, scenario, round, settings);
      rounds.get(target.name)!.push(result);
      settings.log(
        `  ${scenario.id} round ${round}/${settings.rounds} ${target.name.padEnd(7)} ${String(result.rps).padStart(7)} req/s` +
          `  p50 ${result.p50_ms.toFixed(2)} ms  p99 ${result.p99_ms.toFixed(2)} ms` +
          (result.cpu_us_per_request === null ? '' : `  ${result.cpu_us_per_request.toFixed(1)} µs CPU/req`) +
          (result.other_cpu_percent !== null && result.other_cpu_percent >= BUSY_MACHINE_PERCENT ? `  (other processes: ${result.other_cpu_percent}% CPU)` : '') +
          (result.unexpected_status > 0 ? `  (${result.unexpected_status} not ${scenario.expectStatus})` : ''),
      );
    }
  }

  const summaries: Partial<Record<TargetName, TargetSummary>> = {};
  for (const [name, results] of rounds) summaries[name] = summarise(results);
  const server = summaries.server!;
  const ratio = (other: TargetSummary | undefined): number | null =>
    other === undefined || other.median_rps === 0 ? null : round2(server.median_rps / other.median_rps);
  const cpuRatio = (other: TargetSummary | undefined): number | null =>
    other === undefined || other.cpu_us_per_request === null || !server.cpu_us_per_request
      ? null
      : round2(other.cpu_us_per_request / server.cpu_us_per_request);
  const storeWrites = counterTotal(server.rounds, 'store.writes');
  const acknowledged = server.rounds.reduce((sum, round) => sum + round.expected, 0);
  const isWrite = scenario.expectStatus === 201;
  const values: Record<Goal['metric'], number | null> = {
    ratio_same: ratio(summaries.same),
    ratio_group: ratio(summaries.group),
    ratio_ceiling: ratio(summaries.ceiling),
    ratio_naive: ratio(summaries.naive),
    rps: server.median_expected_rps,
    p99_ms: server.p99_ms,
    cpu_us_per_request: server.cpu_us_per_request,
    fsyncs_per_write: isWrite ? fsyncsPerWrite(server) : null,
  };
  return {
    id: scenario.id,
    title: scenario.title,
    connections: scenario.connections,
    targets: summaries,
    ratio_same: values.ratio_same,
    ratio_group: values.ratio_group,
    ratio_ceiling: values.ratio_ceiling,
    ratio_naive: values.ratio_naive,
    cpu_ratio_same: cpuRatio(summaries.same),
    cpu_ratio_group: cpuRatio(summaries.group),
    cpu_ratio_ceiling: cpuRatio(summaries.ceiling),
    cpu_ratio_naive: cpuRatio(summaries.naive),
    fsyncs_per_write: values.fsyncs_per_write,
    group_fsyncs_per_write: isWrite && summaries.group !== undefined ? fsyncsPerWrite(summaries.group) : null,
    store_ops_per_write: isWrite && storeWrites !== null && acknowledged > 0 ? round2(storeWrites / acknowledged) : null,
    variant: variantComparison(server, summaries.variant),
    goals: scenario.goals.map((goal) => judge(goal, values)),
    compared_with: scenario.comparedWith ?? null,
  };
}

function variantComparison(server: TargetSummary, variant: TargetSummary | undefined): ScenarioResult['variant'] {
  if (variant === undefined) return null;
  return {
    ratio_rps: server.median_rps === 0 ? null : round2(variant.median_rps / server.median_rps),
    cpu_us_difference:
      variant.cpu_us_per_request === null || server.cpu_us_per_request === null ? null : round2(variant.cpu_us_per_request - server.cpu_us_per_request),
  };
}
