// The performance figures the docs show, rendered from the committed result files
// (docs/performance-results*.json, copied there from a bench run by `npm run bench:publish`).
// Each block names the run it comes from (machine, date, commit, load) and links its file.
// Reading is lenient: a field the bench adds later is ignored, a baseline it adds is shown in
// the notes, and a field an older file lacks shows as "–", so a newer or older bench's file
// still renders.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { GoalVerdict, ScenarioResult, TargetSummary } from './rounds.ts';
import { formatDecimal, formatInteger, type CompactionResults, type CompactionRun, type MainResults, type RunContext, type ScaleResults, type StartupResults } from './report.ts';

/** The bench's output in bench/results/ → the committed copy, per kind of run. */
export const RESULT_FILES = {
  main: { bench: 'latest.json', published: 'docs/performance-results.json', command: 'npm run bench' },
  scale: { bench: 'latest-scale.json', published: 'docs/performance-results-scale.json', command: 'npm run bench -- --scale' },
  startup: { bench: 'latest-startup.json', published: 'docs/performance-results-startup.json', command: 'npm run bench -- --startup' },
  compaction: { bench: 'latest-compaction.json', published: 'docs/performance-results-compaction.json', command: 'npm run bench:compaction' },
} as const;

export type ResultKind = keyof typeof RESULT_FILES;
export const RESULT_KINDS = Object.keys(RESULT_FILES) as ResultKind[];

/** The committed results; null where no run of that kind is published. */
export interface PublishedResults {
  main: MainResults | null;
  scale: ScaleResults | null;
  startup: StartupResults | null;
  compaction: CompactionResults | null;
}

/** The command that copies a run into the committed files and renders the blocks. */
export const PUBLISH_COMMAND = 'npm run bench:publish';

/** Parses one result file and checks it holds a run of the expected kind. */
export function parseResults(text: string, kind: ResultKind, where: string): MainResults | ScaleResults | StartupResults | CompactionResults {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} is not valid JSON: ${(error as Error).message}`);
  }
  const found = typeof parsed === 'object' && parsed !== null ? (parsed as { kind?: unknown }).kind : undefined;
  if (found !== kind) throw new Error(`${where} holds ${found === undefined ? 'no "kind"' : `a "${String(found)}" run`}, not a "${kind}" run (${RESULT_FILES[kind].command})`);
  if (typeof (parsed as { started_at?: unknown }).started_at !== 'string') throw new Error(`${where} has no "started_at": not a file the bench wrote`);
  return parsed as MainResults | ScaleResults | StartupResults | CompactionResults;
}

/** The committed results of the repository at `root`. */
export function readPublished(root: string): PublishedResults {
  const read = (kind: ResultKind): unknown => {
    const path = join(root, RESULT_FILES[kind].published);
    return existsSync(path) ? parseResults(readFileSync(path, 'utf8'), kind, RESULT_FILES[kind].published) : null;
  };
  return {
    main: read('main') as MainResults | null,
    scale: read('scale') as ScaleResults | null,
    startup: read('startup') as StartupResults | null,
    compaction: read('compaction') as CompactionResults | null,
  };
}

/** Block names and what each renders; `doc` is the markdown file's path from the root, for relative links. */
const BLOCKS: Record<string, (published: PublishedResults, doc: string) => string> = {
  summary: summaryBlock,
  main: mainBlock,
  scale: scaleBlock,
  startup: startupBlock,
  compaction: compactionBlock,
};

/** The rendering of block `name` for the markdown file `doc`, or null for an unknown name. */
export function renderBlock(name: string, published: PublishedResults, doc: string): string | null {
  const render = BLOCKS[name];
  return render === undefined ? null : render(published, doc);
}

function link(doc: string, kind: ResultKind): string {
  const path = RESULT_FILES[kind].published;
  const target = relative(dirname(doc), path);
  return `[\`${target}\`](${target})`;
}

function notPublished(kind: ResultKind): string {
  return `No ${kind} run is published yet: run \`${RESULT_FILES[kind].command}\`, then \`${PUBLISH_COMMAND}\`.`;
}

/** "2026-11-23 18:40 UTC" from the run's ISO start time. */
function runDate(startedAt: string): string {
  const date = new Date(startedAt);
  return Number.isNaN(date.getTime()) ? startedAt : `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 16)} UTC`;
}

/** Where and when a run was made: the sentence every block starts with. */
export function runLine(run: RunContext, doc: string, kind: ResultKind): string {
  const machine = run.machine;
  const load = machine?.load_average_at_start ?? [];
  const commit = run.git_commit ? `commit \`${run.git_commit.slice(0, 7)}\`` : 'an unknown commit';
  return (
    `Run ${runDate(run.started_at)} at ${commit} on ${machine?.cpus ?? '?'} × ${machine?.cpu_model ?? '?'}, ${machine?.memory_gib ?? '?'} GiB, ` +
    `${machine?.platform ?? '?'}, Node ${machine?.node ?? '?'}; load average ${load.length > 0 ? load.map((value) => value.toFixed(2)).join(' / ') : '?'} ` +
    `(1 / 5 / 15 min) when it started. Figures from ${link(doc, kind)}.`
  );
}

/** How the load was applied: generator, rounds, pinning. */
function settingsLine(run: RunContext, listings: string): string {
  const settings = run.settings;
  const generator = run.generator ? `${run.generator.name}${generatorVersion(run.generator.version)}` : 'an unknown load generator';
  const pinning =
    settings?.pinning === null || settings?.pinning === undefined
      ? 'nothing pinned to CPUs'
      : `servers pinned to CPU ${settings.pinning.target_cpus} and the load generator to CPU ${settings.pinning.generator_cpus}`;
  return (
    `${listings}; load from ${generator}, ${settings?.read_connections ?? '?'} connections for reads and ${settings?.write_connections ?? '?'} for writes; ` +
    `${settings?.rounds ?? '?'} rounds of ${settings?.duration_s ?? '?'} s per target (after ${settings?.warmup_s ?? '?'} s of warm-up), ` +
    `targets alternating, medians over the rounds; ${pinning}.`
  );
}

/** "wrk debian/4.1.0-3+b2 [epoll] Copyright …" → " 4.1.0". */
function generatorVersion(version: string): string {
  const number = /\d+\.\d+(?:\.\d+)?/.exec(version);
  return number ? ` ${number[0]}` : '';
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function table(header: string[], align: string[], rows: string[][]): string[] {
  const line = (cells: string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${align.join('|')}|`, ...rows.map(line)];
}

function goalValue(value: number | null): string {
  if (value === null) return '?';
  return Math.abs(value) >= 100 ? formatInteger(value) : String(Math.round(value * 1000) / 1000);
}

function verdicts(goals: GoalVerdict[] | undefined): string {
  const text = (goals ?? []).map((goal) => `${goal.label}: ${goal.ok === null ? 'not measured' : goal.ok ? 'met' : '**missed**'} (${goalValue(goal.value)})`);
  return text.join('; ') || '–';
}

/** Baselines the report knows by name; any other target of a scenario is shown in its notes. */
const KNOWN_TARGETS = new Set(['server', 'variant', 'same', 'group', 'ceiling', 'headers', 'naive']);

function notes(scenario: ScenarioResult, server: TargetSummary | undefined): string {
  const found: string[] = [];
  if (scenario.fsyncs_per_write !== null && scenario.fsyncs_per_write !== undefined) {
    found.push(`${formatDecimal(scenario.fsyncs_per_write, 3)} fsyncs per write`);
  }
  const group = scenario.targets?.group;
  if (group) {
    found.push(
      `group commit baseline: ${formatInteger(group.median_expected_rps)} writes/s, ` +
        `${formatDecimal(scenario.group_fsyncs_per_write, 3)} fsyncs per write, p99 ${formatDecimal(group.p99_ms)} ms`,
    );
  }
  const headers = scenario.targets?.headers;
  const ceiling = scenario.targets?.ceiling;
  if (headers && ceiling && ceiling.median_rps > 0) {
    found.push(`bare \`node:http\` sending the ceiling's body with the five headers every answer carries: ${formatDecimal(headers.median_rps / ceiling.median_rps)} × ceiling`);
  }
  const record = scenario as unknown as Record<string, unknown>;
  const shownRatios = new Set(['ratio_same', 'ratio_group', 'ratio_ceiling', 'ratio_naive']);
  for (const [name, target] of Object.entries(scenario.targets ?? {})) {
    if (KNOWN_TARGETS.has(name) || target === undefined) continue;
    const ratioKey = `ratio_${name}`;
    shownRatios.add(ratioKey);
    const ratio = typeof record[ratioKey] === 'number' ? (record[ratioKey] as number) : server && target.median_rps > 0 ? server.median_rps / target.median_rps : null;
    found.push(`${name.replace(/[_-]/g, ' ')} baseline: ${formatInteger(target.median_expected_rps ?? target.median_rps)}/s, the server ${formatDecimal(ratio)} × it`);
  }
  for (const [key, value] of Object.entries(record)) {
    if (key.startsWith('ratio_') && !shownRatios.has(key) && typeof value === 'number') found.push(`× ${key.slice(6).replace(/[_-]/g, ' ')}: ${formatDecimal(value)}`);
  }
  if (scenario.variant?.ratio_rps !== null && scenario.variant?.ratio_rps !== undefined) found.push(`variant ÷ server: ${formatDecimal(scenario.variant.ratio_rps)}`);
  if (server && server.unexpected_status > 0 && scenario.id !== 'E') found.push(`${formatInteger(server.unexpected_status)} answers with another status`);
  if (server && server.socket_errors > 0) found.push(`${formatInteger(server.socket_errors)} socket errors`);
  return found.join('; ') || '–';
}

/** "GET /v1/listings?limit=20, one query" with the request as code, so `<1..500>` and the like show as typed. */
function titleText(title: string): string {
  // The request runs to the first space or comma outside a `<placeholder>` (which may hold spaces).
  const request = /^([A-Z]+ (?:<[^>]*>|[^\s,<])+)(.*)$/.exec(title);
  return request ? `\`${request[1]}\`${request[2]}` : title;
}

/** The bench's warnings about a run (a busy machine, odd answers), shown under its figures. */
function warningLines(warnings: string[] | undefined): string[] {
  return warnings && warnings.length > 0 ? ['', 'The bench warned during this run:', '', ...warnings.map((warning) => `- ${warning}`)] : [];
}

function isWrite(scenario: ScenarioResult): boolean {
  return scenario.fsyncs_per_write !== null && scenario.fsyncs_per_write !== undefined;
}

/** docs/performance.md: every scenario of the main run. */
function mainBlock(published: PublishedResults, doc: string): string {
  const run = published.main;
  if (run === null) return notPublished('main');
  const rows = (run.scenarios ?? []).map((scenario) => {
    const server = scenario.targets?.server;
    return [
      `**${scenario.id}** ${titleText(scenario.title)}`,
      isWrite(scenario) ? `${formatInteger(server?.median_expected_rps)} writes/s` : formatInteger(server?.median_rps),
      formatDecimal(scenario.ratio_same),
      formatDecimal(scenario.ratio_group),
      formatDecimal(scenario.ratio_ceiling),
      formatDecimal(scenario.ratio_naive),
      `${formatDecimal(server?.p50_ms)} / ${formatDecimal(server?.p99_ms)}`,
      formatDecimal(server?.cpu_us_per_request, 0),
      verdicts(scenario.goals),
      notes(scenario, server),
    ];
  });
  const environment = Object.entries(run.server_env ?? {}).map(([name, value]) => `${name}=${value}`);
  const lines = [
    runLine(run, doc, 'main'),
    settingsLine(run, `${formatInteger(run.dataset?.listings)} listings`) +
      (environment.length > 0 ? ` The server ran with \`${environment.join(' ')}\`.` : ' The server ran with its shipped defaults (access log and analytics on).'),
    '',
    ...table(
      ['scenario', 'server req/s', '× same bytes', '× group commit', '× ceiling', '× naive', 'p50 / p99 ms', 'CPU µs/req', 'targets', 'notes'],
      ['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---', '---'],
      rows,
    ),
  ];
  return [...lines, ...warningLines(run.warnings)].join('\n');
}

/** docs/performance.md: the --scale run, one row per data-set size. */
function scaleBlock(published: PublishedResults, doc: string): string {
  const run = published.scale;
  if (run === null) return notPublished('scale');
  const rows = run.rows ?? [];
  const ids = [...new Set(rows.flatMap((row) => (row.scenarios ?? []).map((scenario) => scenario.id)))];
  const withGoal = (prefix: string): Set<string> =>
    new Set(rows.flatMap((row) => (row.scenarios ?? []).filter((scenario) => (scenario.goals ?? []).some((goal) => goal.label.startsWith(prefix))).map((scenario) => scenario.id)));
  const withP99 = withGoal('p99');
  const withCpu = withGoal('≤ 1,000 µs CPU');
  const withSearchReady = rows.some((row) => row.search_ready_ms !== undefined);
  const header = ['listings', 'ready s', 'RSS MiB', ...(withSearchReady ? ['search ready s', 'RSS then MiB'] : [])];
  for (const id of ids) header.push(`${id} req/s (× naive)`, ...(withP99.has(id) ? [`${id} p99 ms`] : []), ...(withCpu.has(id) ? [`${id} CPU µs/req`] : []));
  const body = rows.map((row) => {
    const cells = [formatInteger(row.listings), formatDecimal(row.ready_ms / 1000), formatInteger(row.rss_after_ready_mib)];
    if (withSearchReady) cells.push(row.search_ready_ms === undefined ? '–' : formatDecimal(row.search_ready_ms / 1000), formatInteger(row.rss_after_search_ready_mib ?? null));
    for (const id of ids) {
      const scenario = (row.scenarios ?? []).find((candidate) => candidate.id === id);
      const server = scenario?.targets?.server;
      const ratio = scenario?.ratio_naive ?? null;
      cells.push(server ? `${formatInteger(server.median_rps)}${ratio === null ? '' : ` (${formatDecimal(ratio)})`}` : '–');
      if (withP99.has(id)) cells.push(formatDecimal(server?.p99_ms));
      if (withCpu.has(id)) cells.push(formatDecimal(server?.cpu_us_per_request, 0));
    }
    return cells;
  });
  const settings = settingsLine(run, `${rows.map((row) => formatInteger(row.listings)).join(' / ')} listings`);
  const lines = [runLine(run, doc, 'scale'), settings, '', ...table(header, header.map(() => '---:'), body)];
  return [...lines, ...warningLines(run.warnings)].join('\n');
}

/** docs/performance.md: the --startup run, loading a large data set. */
function startupBlock(published: PublishedResults, doc: string): string {
  const run = published.startup;
  if (run === null) return notPublished('startup');
  const attempts = run.attempts ?? [];
  const ready = attempts.map((attempt) => attempt.ready_ms);
  const peaks = attempts.map((attempt) => attempt.rss_peak_mib).filter((value): value is number => value !== null);
  const range = ready.length > 1 ? `, ${formatDecimal(Math.min(...ready) / 1000)}–${formatDecimal(Math.max(...ready) / 1000)} s` : '';
  return [
    runLine(run, doc, 'startup'),
    '',
    `A ${formatInteger(run.listings)}-listing log (${formatInteger(run.log_bytes / 1048576)} MiB) is loaded and the server listening in ` +
      `**${formatDecimal(run.median_ready_ms / 1000)} s** (median of ${attempts.length} starts${range}), with **${formatInteger(run.median_rss_after_ready_mib)} MiB** ` +
      `RSS after the load${peaks.length > 0 ? ` (peak ${formatInteger(Math.max(...peaks))} MiB)` : ''}; an empty data dir starts in ${formatInteger(run.empty_ready_ms)} ms. ` +
      `Targets: ${verdicts(run.goals)}.`,
  ].join('\n');
}

/** "a, b and c" */
function listText(items: string[]): string {
  if (items.length === 0) return 'no scenario measured';
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** README.md: a few headline figures, with where they come from. */
function summaryBlock(published: PublishedResults, doc: string): string {
  const run = published.main;
  if (run === null) return notPublished('main');
  const scenario = (id: string): ScenarioResult | undefined => (run.scenarios ?? []).find((candidate) => candidate.id === id);
  const figures: string[] = [];
  const cached = scenario('A');
  if (cached?.targets?.server) {
    figures.push(
      `a cached page at **${formatInteger(cached.targets.server.median_rps)} req/s**` +
        ` (${cached.ratio_same === null || cached.ratio_same === undefined ? '' : `${formatDecimal(cached.ratio_same)} × a bare \`node:http\` server sending the same bytes; `}` +
        `p99 ${formatDecimal(cached.targets.server.p99_ms)} ms)`,
    );
  }
  const byId = scenario('C');
  if (byId?.targets?.server) figures.push(`a listing by id at **${formatInteger(byId.targets.server.median_rps)} req/s**`);
  const writes = (run.scenarios ?? []).find(isWrite);
  if (writes?.targets?.server) {
    figures.push(
      `**${formatInteger(writes.targets.server.median_expected_rps)} durable writes/s** at ${writes.connections} connections ` +
        `(each on disk before its answer; ${formatDecimal(writes.fsyncs_per_write, 3)} fsyncs per write)`,
    );
  }
  const startup = published.startup;
  const startupText =
    startup === null
      ? ''
      : ` In a separate run (${runDate(startup.started_at)}), ${formatInteger(startup.listings)} listings load in ${formatDecimal(startup.median_ready_ms / 1000)} s ` +
        `with ${formatInteger(startup.median_rss_after_ready_mib)} MiB of memory.`;
  return [
    `On ${run.machine?.cpus ?? '?'} × ${run.machine?.cpu_model ?? '?'} with ${formatInteger(run.dataset?.listings)} listings, shipped defaults: ${listText(figures)}.` +
      startupText,
    `${runLine(run, doc, 'main')} Every scenario, the baselines and how to measure: [docs/performance.md](${relative(dirname(doc), 'docs/performance.md')}).`,
  ].join('\n');
}

/** The goals of a compaction beside traffic, for one run: absolute bounds, and within 2× of the same traffic without it. */
function compactionGoals(run: CompactionRun): string {
  const { without, during } = run;
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  return [
    `worst write ≤ 100 ms: ${verdict(during.write.maxMs <= 100)}`,
    `≤ 2 × without: ${verdict(during.write.maxMs <= 2 * without.write.maxMs)} (${formatDecimal(during.write.maxMs / without.write.maxMs)} ×)`,
    `event-loop delay ≤ 20 ms: ${verdict(during.loopDelayMaxMs <= 20)}`,
    `≤ 2 × without: ${verdict(during.loopDelayMaxMs <= 2 * without.loopDelayMaxMs)} (${formatDecimal(during.loopDelayMaxMs / without.loopDelayMaxMs)} ×)`,
  ].join('; ');
}

function compactionBlock(published: PublishedResults, doc: string): string {
  const run = published.compaction;
  if (run === null) return notPublished('compaction');
  const { traffic } = run;
  const servers = run.servers.map((server) => `${server.label}: commit \`${server.git_commit?.slice(0, 7) ?? '?'}\``).join(', ');
  const pair = (without: number, during: number) => `${formatInteger(without)} / **${formatInteger(during)}**`;
  const rows = run.runs.map((item) => [
    formatInteger(item.listings),
    `${item.label} (${item.repeat})`,
    `${formatDecimal(item.compactionSeconds)} s`,
    pair(item.without.write.maxMs, item.during.write.maxMs),
    pair(item.without.write.p99Ms, item.during.write.p99Ms),
    pair(item.without.read.maxMs, item.during.read.maxMs),
    pair(item.without.loopDelayMaxMs, item.during.loopDelayMaxMs),
    `${formatInteger(item.during.write.count)} / ${formatInteger(item.during.read.count)}`,
    formatInteger(item.without.write.errors + item.without.read.errors + item.during.write.errors + item.during.read.errors),
    item.label === 'this code' ? compactionGoals(item) : '–',
  ]);
  return [
    runLine(run, doc, 'compaction'),
    '',
    `Servers: ${servers}. Listings of about 1 KB, 80% of them updated once; ${traffic.writers} clients each updating a listing ${traffic.writes_per_s_each} times a second and ` +
      `${traffic.readers} each reading one ${traffic.reads_per_s_each} times a second (each waits for its answer); after ${traffic.warmup_s} s of traffic, ${traffic.repeats === 1 ? 'once' : `${traffic.repeats} times`}: ` +
      `a window of ${traffic.without_s} s without compaction, then \`POST /admin/v1/compact\` (its window lasts until it answers). A request counts in a window when it was in flight during it. ` +
      'Latencies are measured by the clients, the event-loop delay inside the server. Each cell: without / **during** the compaction.',
    '',
    ...table(
      ['listings', 'server (repeat)', 'compaction took', 'worst write ms', 'p99 write ms', 'worst read ms', 'event-loop delay max ms', 'writes / reads during', 'errors', 'goals'],
      ['---:', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---'],
      rows,
    ),
  ].join('\n');
}
