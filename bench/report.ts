// Turns results into the markdown tables printed at the end and saved next to the JSON:
// the main run, the --scale growth table, and the --startup table.

import type { GoalVerdict, ScenarioResult, TargetSummary } from './rounds.ts';

export interface RunContext {
  started_at: string;
  machine: { cpus: number; cpu_model: string; memory_gib: number; node: string; platform: string; load_average_at_start: number[] };
  generator: { name: string; version: string };
  settings: {
    rounds: number;
    duration_s: number;
    warmup_s: number;
    read_connections: number;
    write_connections: number;
    pinning: { target_cpus: string; generator_cpus: string } | null;
  };
  git_commit: string | null;
}

export interface MainResults extends RunContext {
  kind: 'main';
  dataset: { listings: number; log_bytes: number; seed_s: number };
  server: { ready_ms: number; rss_after_ready_mib: number | null; stats_endpoint: boolean };
  /** Extra environment of the server (--server-env) and of the second server (--variant). */
  server_env: Record<string, string>;
  variant_env: Record<string, string> | null;
  variant_entry: string | null;
  body_bytes: { list: number; item: number };
  warnings: string[];
  scenarios: ScenarioResult[];
}

export interface ScaleRow {
  listings: number;
  log_bytes: number;
  ready_ms: number;
  rss_after_ready_mib: number | null;
  /** From the start until a search (which waits for the search index to be full) answered; absent in older runs. */
  search_ready_ms?: number;
  rss_after_search_ready_mib?: number | null;
  scenarios: ScenarioResult[];
}

export interface ScaleResults extends RunContext {
  kind: 'scale';
  warnings: string[];
  rows: ScaleRow[];
}

/** Requests of one kind in one window: how many, how many failed, p99 and worst latency. */
export interface CompactionLatency {
  count: number;
  errors: number;
  /** The failed ones by status ("0": no answer, a socket error); absent in files of the first runs. */
  errorStatuses?: Record<string, number>;
  p99Ms: number;
  maxMs: number;
}

/** One window of the compaction benchmark (bench/compaction.ts). */
export interface CompactionWindow {
  seconds: number;
  read: CompactionLatency;
  write: CompactionLatency;
  loopDelayMaxMs: number;
}

/** One compaction under traffic, with the window before it that had none. */
export interface CompactionRun {
  /** Which server: "this code" or "compared" (see `servers`). */
  label: string;
  repeat: number;
  listings: number;
  logBytesBefore: number;
  startSeconds: number;
  compactionSeconds: number;
  compactionAnswer: string;
  without: CompactionWindow;
  during: CompactionWindow;
}

export interface CompactionResults extends RunContext {
  kind: 'compaction';
  /** The servers measured, by label: their entry file and the commit of its checkout. */
  servers: Array<{ label: string; entry: string; git_commit: string | null }>;
  traffic: { writers: number; readers: number; writes_per_s_each: number; reads_per_s_each: number; warmup_s: number; without_s: number; repeats: number };
  runs: CompactionRun[];
}

export interface StartupResults extends RunContext {
  kind: 'startup';
  listings: number;
  log_bytes: number;
  seed_s: number;
  empty_ready_ms: number;
  attempts: Array<{
    ready_ms: number;
    healthz_ms: number;
    rss_after_ready_mib: number | null;
    rss_peak_mib: number | null;
    /** CPU seconds the server had used when ready: with other load on the machine, steadier than the wall time. */
    cpu_s_at_ready: number | null;
  }>;
  median_ready_ms: number;
  median_rss_after_ready_mib: number | null;
  goals: GoalVerdict[];
}

export const formatInteger = (value: number | null | undefined): string =>
  value === null || value === undefined || Number.isNaN(value) ? '–' : Math.round(value).toLocaleString('en');
export const formatDecimal = (value: number | null | undefined, digits = 2): string =>
  value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

function withCpuRatio(ratio: number | null, cpuRatio: number | null): string {
  return cpuRatio === null ? formatDecimal(ratio) : `${formatDecimal(ratio)} (cpu ${formatDecimal(cpuRatio)})`;
}

function verdicts(goals: GoalVerdict[]): string {
  return goals.map((goal) => `${goal.ok === null ? '?' : goal.ok ? 'ok' : '**MISS**'} ${goal.label}`).join('; ') || '–';
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function contextLines(context: RunContext): string[] {
  const { machine, generator, settings } = context;
  return [
    `Run ${context.started_at}${context.git_commit ? ` at commit ${context.git_commit.slice(0, 10)}` : ''}; ` +
      `${machine.cpus} × ${machine.cpu_model}, ${machine.memory_gib} GiB, Node ${machine.node} on ${machine.platform}; ` +
      `load average at start ${machine.load_average_at_start.map((value) => value.toFixed(2)).join(' ')}.`,
    `Load generator: ${generator.version}. ${settings.rounds} rounds of ${settings.duration_s} s (after ${settings.warmup_s} s warm-up) per target, ` +
      `targets alternating; figures are medians over rounds. ` +
      (settings.pinning === null
        ? 'Not pinned to CPUs.'
        : `Servers pinned to CPU ${settings.pinning.target_cpus}, the load generator to CPU ${settings.pinning.generator_cpus}.`),
  ];
}

function serverCell(summary: TargetSummary | undefined, pick: (summary: TargetSummary) => string): string {
  return summary === undefined ? '–' : pick(summary);
}

export function mainMarkdown(results: MainResults): string {
  const rows = results.scenarios.map((scenario) => {
    const server = scenario.targets.server!;
    const isWrite = scenario.fsyncs_per_write !== null || scenario.id === 'D';
    const notes: string[] = [];
    if (isWrite) {
      notes.push(`${formatInteger(server.median_expected_rps)} acknowledged writes/s`);
      notes.push(`${formatDecimal(scenario.fsyncs_per_write, 3)} fsyncs/write`);
      const group = scenario.targets.group;
      if (group !== undefined) {
        notes.push(
          `group commit: ${formatInteger(group.median_expected_rps)} writes/s, ${formatDecimal(scenario.group_fsyncs_per_write, 3)} fsyncs/write, ` +
            `p50 ${formatDecimal(group.p50_ms)} / p99 ${formatDecimal(group.p99_ms)} ms, ${formatDecimal(group.cpu_us_per_request, 0)} µs CPU/write`,
        );
      }
      if (scenario.store_ops_per_write !== null) notes.push(`${formatDecimal(scenario.store_ops_per_write)} store ops/write`);
    }
    if (scenario.id === 'E') notes.push(`${formatInteger(server.median_expected_rps)} × 429/s`);
    const headers = scenario.targets.headers;
    const ceiling = scenario.targets.ceiling;
    if (headers !== undefined && ceiling !== undefined && ceiling.median_rps > 0 && headers.median_rps > 0) {
      // What the contract's own headers cost Node, apart from everything the API does.
      notes.push(
        `ceiling + the contract's 5 headers: ${formatInteger(headers.median_rps)} req/s = ${formatDecimal(headers.median_rps / ceiling.median_rps)} × ceiling; ` +
          `server = ${formatDecimal(server.median_rps / headers.median_rps)} × that`,
      );
    }
    const compared = scenario.compared_with;
    const reference = compared ? results.scenarios.find((candidate) => candidate.id === compared.id)?.targets.server : undefined;
    if (compared && reference !== undefined && reference.median_rps > 0) {
      const ratio = server.median_rps / reference.median_rps;
      notes.push(`${formatDecimal(ratio)} × ${compared.id} in this run (goal ≥ ${compared.atLeast}: ${ratio >= compared.atLeast ? 'met' : 'not met'})`);
    }
    if (server.unexpected_status > 0 && scenario.id !== 'E') notes.push(`${formatInteger(server.unexpected_status)} answers with another status`);
    if (server.socket_errors > 0) notes.push(`${server.socket_errors} socket errors`);
    return [
      `**${scenario.id}** ${scenario.title}`,
      String(scenario.connections),
      formatInteger(server.median_rps),
      formatDecimal(server.p50_ms),
      formatDecimal(server.p99_ms),
      formatDecimal(server.cpu_us_per_request, 0),
      formatInteger(server.rss_peak_mib),
      serverCell(scenario.targets.same, (same) => formatInteger(same.median_rps)),
      withCpuRatio(scenario.ratio_same, scenario.cpu_ratio_same),
      serverCell(scenario.targets.group, (group) => formatInteger(group.median_rps)),
      withCpuRatio(scenario.ratio_group, scenario.cpu_ratio_group),
      serverCell(scenario.targets.ceiling, (ceiling) => formatInteger(ceiling.median_rps)),
      withCpuRatio(scenario.ratio_ceiling, scenario.cpu_ratio_ceiling),
      serverCell(scenario.targets.naive, (naive) => formatInteger(naive.median_rps)),
      withCpuRatio(scenario.ratio_naive, scenario.cpu_ratio_naive),
      verdicts(scenario.goals),
      notes.join('; ') || '–',
    ];
  });
  const baselines = results.scenarios
    .filter((scenario) => scenario.targets.ceiling || scenario.targets.naive)
    .map((scenario) => [
      scenario.id,
      serverCell(scenario.targets.ceiling, (ceiling) => `${formatDecimal(ceiling.p50_ms)} / ${formatDecimal(ceiling.p99_ms)}`),
      serverCell(scenario.targets.naive, (naive) => `${formatDecimal(naive.p50_ms)} / ${formatDecimal(naive.p99_ms)}`),
      serverCell(scenario.targets.naive, (naive) => formatDecimal(naive.cpu_us_per_request, 0)),
      serverCell(scenario.targets.naive, (naive) => formatInteger(naive.rss_peak_mib)),
    ]);
  return [
    `# Benchmark: ${results.dataset.listings.toLocaleString('en')} listings`,
    '',
    ...contextLines(results),
    `Server ready in ${formatInteger(results.server.ready_ms)} ms, RSS ${formatInteger(results.server.rss_after_ready_mib)} MiB after load; ` +
      `list answer ${results.body_bytes.list} B, one listing ${results.body_bytes.item} B (the ceiling answers bodies of those sizes with two headers; ` +
      '"same bytes" replays the exact status, headers and body the server sent for the cached page, an uncached page and a lookup by id; ' +
      '"group commit" is a bare durable writer that appends the log line the server wrote for a POST, one write and one fdatasync per batch, ' +
      'and answers with the bytes the server answered it).' +
      (Object.keys(results.server_env).length > 0 ? ` Server run with \`${envText(results.server_env)}\`.` : ''),
    '',
    table(
      ['scenario', 'conns', 'server req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MiB', 'same bytes req/s', '× same bytes', 'group commit req/s', '× group commit', 'ceiling req/s', '× ceiling', 'naive req/s', '× naive', 'targets', 'notes'],
      rows,
    ),
    '',
    'Baselines, latency p50 / p99 in ms:',
    '',
    table(['scenario', 'ceiling', 'naive', 'naive CPU µs/req', 'naive RSS MiB'], baselines),
    ...variantLines(results),
    ...(results.warnings.length > 0 ? ['', 'Warnings:', '', ...results.warnings.map((warning) => `- ${warning}`)] : []),
    '',
  ].join('\n');
}

function envText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}

/** The --variant comparison: same rounds, alternating, so the difference is the setting's own cost. */
function variantLines(results: MainResults): string[] {
  if (results.variant_env === null) return [];
  const rows = results.scenarios.map((scenario) => {
    const server = scenario.targets.server;
    const variant = scenario.targets.variant;
    const difference = scenario.variant?.cpu_us_difference ?? null;
    return [
      scenario.id,
      formatInteger(server?.median_rps),
      formatInteger(variant?.median_rps),
      formatDecimal(scenario.variant?.ratio_rps),
      formatDecimal(server?.cpu_us_per_request, 1),
      formatDecimal(variant?.cpu_us_per_request, 1),
      difference === null ? '–' : `${difference > 0 ? '+' : ''}${difference.toFixed(1)}`,
    ];
  });
  return [
    '',
    `Variant: a second server (\`${results.variant_entry}\`${Object.keys(results.variant_env).length > 0 ? ` with \`${envText(results.variant_env)}\`` : ''}) against the main one${
      Object.keys(results.server_env).length > 0 ? ` (both with \`${envText(results.server_env)}\`)` : ''
    }, in the same alternating rounds:`,
    '',
    table(['scenario', 'server req/s', 'variant req/s', 'variant ÷ server', 'server CPU µs/req', 'variant CPU µs/req', 'variant − server µs/req'], rows),
  ];
}

export function scaleMarkdown(results: ScaleResults): string {
  const ids = results.rows[0]?.scenarios.map((scenario) => scenario.id) ?? [];
  const first = results.rows[0];
  const header = ['listings', 'ready s', 'RSS MiB', 'search ready s', 'RSS then MiB'];
  for (const id of ids) header.push(`${id} req/s`, `${id} p50 / p99 ms`, `${id} CPU µs/req`, `${id} × naive`);
  const rows = results.rows.map((row) => {
    const cells = [
      row.listings.toLocaleString('en'),
      formatDecimal(row.ready_ms / 1000),
      formatInteger(row.rss_after_ready_mib),
      row.search_ready_ms === undefined ? '–' : formatDecimal(row.search_ready_ms / 1000),
      formatInteger(row.rss_after_search_ready_mib ?? null),
    ];
    for (const scenario of row.scenarios) {
      const server = scenario.targets.server!;
      cells.push(formatInteger(server.median_rps), `${formatDecimal(server.p50_ms)} / ${formatDecimal(server.p99_ms)}`, formatDecimal(server.cpu_us_per_request, 0), formatDecimal(scenario.ratio_naive));
    }
    return cells;
  });
  const growthHeader = ['listings', '× listings', 'ready', 'RSS', ...ids.map((id) => `${id} req/s`), ...ids.map((id) => `naive ${id} req/s`)];
  const growthRows = results.rows.map((row) => {
    const relative = (now: number | null | undefined, then: number | null | undefined): string =>
      now === null || now === undefined || then === null || then === undefined || then === 0 ? '–' : `${formatDecimal(now / then)}×`;
    return [
      row.listings.toLocaleString('en'),
      relative(row.listings, first?.listings),
      relative(row.ready_ms, first?.ready_ms),
      relative(row.rss_after_ready_mib, first?.rss_after_ready_mib),
      ...row.scenarios.map((scenario, index) =>
        relative(scenario.targets.server?.median_rps, first?.scenarios[index]?.targets.server?.median_rps),
      ),
      ...row.scenarios.map((scenario, index) =>
        relative(scenario.targets.naive?.median_rps, first?.scenarios[index]?.targets.naive?.median_rps),
      ),
    ];
  });
  return [
    '# Benchmark --scale: how A, B and C grow with the number of listings',
    '',
    ...contextLines(results),
    '',
    table(header, rows),
    '',
    `Relative to ${first?.listings.toLocaleString('en') ?? '?'} listings (1.00× = no change; for req/s lower is worse, for ready and RSS higher is worse):`,
    '',
    table(growthHeader, growthRows),
    ...(results.warnings.length > 0 ? ['', 'Warnings:', '', ...results.warnings.map((warning) => `- ${warning}`)] : []),
    '',
  ].join('\n');
}

export function startupMarkdown(results: StartupResults): string {
  return [
    `# Benchmark --startup: ${results.listings.toLocaleString('en')} listings`,
    '',
    ...contextLines(results).slice(0, 1),
    `Log ${formatDecimal(results.log_bytes / 1048576, 0)} MiB, written in ${formatDecimal(results.seed_s, 1)} s. ` +
      `An empty data dir starts in ${formatInteger(results.empty_ready_ms)} ms (Node + tsx + the code itself).`,
    '',
    table(
      ['attempt', 'ready (listening line) ms', 'CPU s at ready', '/healthz 200 ms', 'RSS after ready MiB', 'peak RSS MiB'],
      results.attempts.map((attempt, index) => [
        String(index + 1),
        formatInteger(attempt.ready_ms),
        formatDecimal(attempt.cpu_s_at_ready),
        formatInteger(attempt.healthz_ms),
        formatInteger(attempt.rss_after_ready_mib),
        formatInteger(attempt.rss_peak_mib),
      ]),
    ),
    '',
    `Median: ready in ${formatDecimal(results.median_ready_ms / 1000)} s, RSS ${formatInteger(results.median_rss_after_ready_mib)} MiB. ` +
      `Targets: ${verdicts(results.goals)}.`,
    '',
  ].join('\n');
}
