// The published performance figures: rendered from the committed result files, written into
// the docs' marked blocks by `npm run bench:publish`, and checked by `npm run check:docs`, which
// must catch a figure edited by hand and a result file changed without re-rendering.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findMarkedBlocks, staleBlocks } from '../../bench/marked-blocks.ts';
import { publish } from '../../bench/publish.ts';
import { readPublished, renderBlock, RESULT_FILES, type PublishedResults } from '../../bench/published-figures.ts';
import type { CompactionResults, MainResults, ScaleResults, StartupResults } from '../../bench/report.ts';
import { documentationFiles, publishedFigureProblems } from '../docs/check-docs.ts';
import { temporaryDir } from '../helpers/server.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const COMMITTED_MAIN = readFileSync(join(ROOT, RESULT_FILES.main.published), 'utf8');

/** A real main run as the bench wrote it, with figures set to values the assertions can name. */
function mainRun(): MainResults {
  const run = JSON.parse(COMMITTED_MAIN) as MainResults;
  run.started_at = '2031-02-03T04:05:06.000Z';
  run.git_commit = 'abcdef0123456789abcdef0123456789abcdef01';
  run.machine.load_average_at_start = [0.25, 1.5, 2];
  run.scenarios = run.scenarios.filter((scenario) => scenario.id === 'A' || scenario.id === 'D');
  const cached = run.scenarios.find((scenario) => scenario.id === 'A')!;
  cached.targets.server!.median_rps = 12_345;
  cached.targets.server!.p99_ms = 3.21;
  cached.ratio_same = 0.87;
  cached.goals = [{ label: '≥ 0.85 × same bytes', value: 0.87, ok: true }];
  const writes = run.scenarios.find((scenario) => scenario.id === 'D')!;
  writes.targets.server!.median_expected_rps = 6_543;
  writes.fsyncs_per_write = 0.042;
  writes.goals = [{ label: '≥ 5,000 writes/s', value: 6543, ok: true }, { label: 'p99 ≤ 20 ms', value: 31.5, ok: false }];
  return run;
}

function only(main: MainResults | null, more: Partial<PublishedResults> = {}): PublishedResults {
  return { main, scale: null, startup: null, compaction: null, ...more };
}

test('the main block names the run (date, commit, machine, load) and shows each scenario with its ratios and targets', () => {
  const text = renderBlock('main', only(mainRun()), 'docs/performance.md')!;
  assert.match(text, /^Run 2031-02-03 04:05 UTC at commit `abcdef0` on 2 × AMD EPYC, 24 GiB, .*load average 0\.25 \/ 1\.50 \/ 2\.00/);
  assert.match(text, /\[`performance-results\.json`\]\(performance-results\.json\)/, 'links its file relative to the page');
  const rowOf = (id: string): string => text.split('\n').find((line) => line.startsWith(`| **${id}**`)) ?? '';
  assert.match(rowOf('A'), /\| 12,345 \| 0\.87 \|/);
  assert.match(rowOf('A'), / \/ 3\.21 \|/);
  assert.match(rowOf('A'), /≥ 0\.85 × same bytes: met \(0\.87\)/);
  assert.match(rowOf('D'), /\| 6,543 writes\/s \|/);
  assert.match(rowOf('D'), /p99 ≤ 20 ms: \*\*missed\*\* \(31\.5\)/);
  assert.match(rowOf('D'), /0\.042 fsyncs per write/);
  assert.equal(rowOf('B3'), '', 'a scenario the run did not measure has no row');
  const busy = mainRun();
  busy.warnings = ['D server: other processes used 139% of a core during the median round'];
  assert.match(renderBlock('main', only(busy), 'docs/performance.md')!, /\n\nThe bench warned during this run:\n\n- D server: other processes used 139% of a core/);
  assert.doesNotMatch(text, /warned/);
});

test('a request with a space inside its placeholders is shown whole as code', () => {
  const run = JSON.parse(COMMITTED_MAIN) as MainResults;
  const filtered = run.scenarios.find((scenario) => scenario.id === 'B4')!;
  filtered.title = 'GET /v1/listings?type=<6 types>&q=<24 words>&limit=<11..30> (filtered, mostly misses)';
  const text = renderBlock('main', only(run), 'docs/performance.md')!;
  const row = text.split('\n').find((line) => line.startsWith('| **B4**')) ?? '';
  assert.match(row, /\| \*\*B4\*\* `GET \/v1\/listings\?type=<6 types>&q=<24 words>&limit=<11\.\.30>` \(filtered, mostly misses\) \|/);
});

test('the README summary gives the headline figures and where they come from', () => {
  const text = renderBlock('summary', only(mainRun()), 'README.md')!;
  assert.match(text, /a cached page at \*\*12,345 req\/s\*\* \(0\.87 × a bare `node:http` server sending the same bytes; p99 3\.21 ms\)/);
  assert.match(text, /\*\*6,543 durable writes\/s\*\* at 64 connections .*0\.042 fsyncs per write/);
  assert.match(text, /commit `abcdef0`.*load average 0\.25/);
  assert.match(text, /\(docs\/performance-results\.json\)/, 'links from the root');
  assert.doesNotMatch(text, /listing by id/, 'no C in this run, so no C figure');
});

test('D against the group-commit baseline: its ratio in its column, its rate, fsyncs and p99 in the notes', () => {
  const run = mainRun();
  const writes = run.scenarios.find((scenario) => scenario.id === 'D')!;
  writes.targets.group = { ...writes.targets.server!, median_rps: 8000, median_expected_rps: 8000, p99_ms: 9 };
  writes.ratio_group = 0.82;
  writes.group_fsyncs_per_write = 0.01;
  const text = renderBlock('main', only(run), 'docs/performance.md')!;
  const cells = (start: string): string[] => text.split('\n').find((line) => line.startsWith(start))!.slice(2, -2).split(' | ');
  const header = cells('| scenario');
  const row = cells('| **D**');
  assert.equal(row[header.indexOf('× group commit')], '0.82');
  assert.match(row[header.indexOf('notes')]!, /group commit baseline: 8,000 writes\/s, 0\.010 fsyncs per write, p99 9\.00 ms/);
});

test('a file from a newer bench renders: added fields are ignored and an added baseline shows in the notes', () => {
  const run = mainRun() as MainResults & { new_top_level: unknown };
  run.new_top_level = { anything: [1, 2] };
  const writes = run.scenarios.find((scenario) => scenario.id === 'D')! as unknown as Record<string, unknown> & { targets: Record<string, unknown> };
  writes.targets.journal = { ...(writes.targets.server as object), median_rps: 8000, median_expected_rps: 8000, p99_ms: 9 };
  writes.ratio_journal = 0.82;
  writes.ratio_disk_bytes = 1.5;
  writes.some_new_column = 'x';
  const text = renderBlock('main', only(run), 'docs/performance.md')!;
  const row = text.split('\n').find((line) => line.startsWith('| **D**'))!;
  assert.match(row, /journal baseline: 8,000\/s, the server 0\.82 × it/);
  assert.match(row, /× disk bytes: 1\.50/);
  assert.equal(row.split(' | ').length, text.split('\n').find((line) => line.startsWith('| scenario'))!.split(' | ').length, 'same number of columns as the header');
});

test('a file from an older bench renders: missing ratios show as "–"', () => {
  const run = mainRun();
  const cached = run.scenarios.find((scenario) => scenario.id === 'A')! as unknown as Record<string, unknown>;
  delete cached.ratio_same;
  delete cached.ratio_ceiling;
  delete cached.goals;
  const row = renderBlock('main', only(run), 'docs/performance.md')!.split('\n').find((line) => line.startsWith('| **A**'))!;
  assert.match(row, /\| 12,345 \| – \| – \| – \|/);
});

test('scale and start-up blocks: one row per size, the start-up medians; a run not published says how to publish it', () => {
  const main = mainRun();
  const scale: ScaleResults = {
    ...main,
    kind: 'scale',
    warnings: [],
    rows: [1000, 1_000_000].map((listings, index) => ({
      listings,
      log_bytes: listings * 400,
      ready_ms: 300 + index * 4000,
      rss_after_ready_mib: 80 + index * 600,
      scenarios: main.scenarios.filter((scenario) => scenario.id === 'A').map((scenario) => ({ ...scenario, ratio_naive: 2 + index, goals: [{ label: 'p99 ≤ 10 ms', value: 3.21, ok: true }] })),
    })),
  };
  const startup: StartupResults = {
    ...main,
    kind: 'startup',
    listings: 1_000_000,
    log_bytes: 400 * 1048576,
    seed_s: 3,
    empty_ready_ms: 350,
    attempts: [4400, 4500, 4900].map((ready_ms) => ({ ready_ms, healthz_ms: ready_ms + 10, rss_after_ready_mib: 730, rss_peak_mib: 900, cpu_s_at_ready: 5 })),
    median_ready_ms: 4500,
    median_rss_after_ready_mib: 730,
    goals: [{ label: 'ready ≤ 5 s', value: 4.5, ok: true }],
  };
  const published = only(main, { scale, startup });
  const scaleText = renderBlock('scale', published, 'docs/performance.md')!;
  assert.match(scaleText, /\| 1,000,000 \| 4\.30 \| 680 \| 12,345 \(3\.00\) \| 3\.21 \|/);
  assert.match(scaleText, /performance-results-scale\.json/);
  const startupText = renderBlock('startup', published, 'docs/performance.md')!;
  assert.match(startupText, /A 1,000,000-listing log \(400 MiB\) is loaded and the server listening in \*\*4\.50 s\*\* \(median of 3 starts, 4\.40–4\.90 s\)/);
  assert.match(startupText, /\*\*730 MiB\*\* RSS after the load \(peak 900 MiB\)/);
  assert.match(renderBlock('summary', published, 'README.md')!, /1,000,000 listings load in 4\.50 s with 730 MiB/);
  assert.match(renderBlock('scale', only(main), 'docs/performance.md')!, /No scale run is published yet: run `npm run bench -- --scale`, then `npm run bench:publish`/);
  assert.equal(renderBlock('no-such-block', published, 'README.md'), null);
});

test('the compaction block: one row per window pair, without / during, and the goals for this code only', () => {
  const window = (writeMax: number, loop: number) => ({ seconds: 10, read: { count: 900, errors: 0, p99Ms: 40, maxMs: 60 }, write: { count: 200, errors: 0, p99Ms: 80, maxMs: writeMax }, loopDelayMaxMs: loop });
  const run = {
    ...mainRun(),
    kind: 'compaction',
    git_commit: '1234567890',
    servers: [
      { label: 'this code', entry: '/a/src/main.ts', git_commit: '1234567890' },
      { label: 'compared', entry: '/b/src/main.ts', git_commit: 'abcdefabcd' },
    ],
    traffic: { writers: 4, readers: 8, writes_per_s_each: 25, reads_per_s_each: 50, warmup_s: 10, without_s: 10, repeats: 1 },
    runs: [
      { label: 'this code', repeat: 1, listings: 100_000, logBytesBefore: 1, startSeconds: 2, compactionSeconds: 4.5, compactionAnswer: '200', without: window(90, 8), during: window(95, 30) },
      { label: 'compared', repeat: 1, listings: 100_000, logBytesBefore: 1, startSeconds: 2, compactionSeconds: 3.6, compactionAnswer: '200', without: window(90, 8), during: window(3600, 300) },
    ],
  } as unknown as CompactionResults;
  const text = renderBlock('compaction', only(null, { compaction: run }), 'docs/performance.md')!;
  assert.match(text, /^Run 2031-02-03 04:05 UTC at commit `1234567`/);
  assert.match(text, /this code: commit `1234567`, compared: commit `abcdefa`/);
  const rows = text.split('\n').filter((line) => line.startsWith('| 100,000'));
  assert.equal(rows.length, 2);
  assert.match(rows[0]!, /\| this code \(1\) \| 4\.50 s \| 90 \/ \*\*95\*\* \|/);
  assert.match(rows[0]!, /worst write ≤ 100 ms: met; ≤ 2 × without: met \(1\.06 ×\); event-loop delay ≤ 20 ms: \*\*missed\*\*; ≤ 2 × without: \*\*missed\*\* \(3\.75 ×\)/);
  assert.match(rows[1]!, /\| compared \(1\) \| 3\.60 s \| 90 \/ \*\*3,600\*\* \|.*\| – \|$/);
  assert.match(renderBlock('compaction', only(null), 'docs/performance.md')!, /No compaction run is published yet: run `npm run bench:compaction`/);
});

test('marked blocks: a hand edit, a missing end marker, a misspelt marker and an unknown block are each reported with their line', () => {
  const render = (name: string): string | null => (name === 'x' ? 'line one\nline two' : null);
  const good = ['# T', '<!-- results:x:begin (anything) -->', '', 'line one', 'line two', '', '<!-- results:x:end -->', 'after'].join('\n');
  assert.deepEqual(staleBlocks(good, render), []);
  const edited = good.replace('line two', 'line 2');
  assert.deepEqual(staleBlocks(edited, render), [{ line: 5, problem: 'block "x" differs from what the published results render: expected "line two", found "line 2"' }]);
  assert.match(staleBlocks(good.replace('\n<!-- results:x:end -->', '\nextra\n<!-- results:x:end -->'), render)[0]!.problem, /expected the end marker, found "extra"/);
  assert.match(staleBlocks(good.replace('<!-- results:x:end -->', ''), render)[0]!.problem, /block "x" has no end marker/);
  assert.match(staleBlocks(good.replace('results:x:end', 'results:x:ned'), render).map((problem) => problem.problem).join('\n'), /not a valid marker/);
  assert.deepEqual(staleBlocks(good.replaceAll('results:x:', 'results:y:'), render), [{ line: 2, problem: 'unknown block "y"' }]);
  assert.equal(findMarkedBlocks(good).blocks[0]!.name, 'x');
});

/** A small repository: a README and a performance page with blocks, and a bench results folder. */
function sampleRepository(t: Parameters<typeof temporaryDir>[0]): { root: string; from: string; files: string[] } {
  const root = temporaryDir(t);
  const from = join(root, 'bench', 'results');
  mkdirSync(join(root, 'docs'));
  mkdirSync(from, { recursive: true });
  const block = (name: string): string => `<!-- results:${name}:begin -->\nold text\n<!-- results:${name}:end -->`;
  writeFileSync(join(root, 'README.md'), `# Sample\n\n## Performance\n\n${block('summary')}\n\n## More\n`);
  writeFileSync(join(root, 'docs', 'performance.md'), `# Performance\n\n${block('main')}\n\nProse.\n\n${block('startup')}\n`);
  writeFileSync(join(from, RESULT_FILES.main.bench), `${JSON.stringify(mainRun(), null, 2)}\n`);
  return { root, from, files: documentationFiles(root) };
}

test('publish copies the run byte for byte and renders the blocks; the check then passes, and catches a hand edit and a stale file', (t) => {
  const { root, from, files } = sampleRepository(t);
  assert.notDeepEqual(publishedFigureProblems(root, files), [], 'the placeholder text is not what the results render');
  const changed = publish({ root, from, only: null, log: () => {} });
  assert.deepEqual(changed, [RESULT_FILES.main.published, 'README.md', 'docs/performance.md']);
  assert.equal(readFileSync(join(root, RESULT_FILES.main.published), 'utf8'), readFileSync(join(from, RESULT_FILES.main.bench), 'utf8'));
  const page = readFileSync(join(root, 'docs', 'performance.md'), 'utf8');
  assert.match(page, /\| \*\*A\*\* .* \| 12,345 \|/);
  assert.match(page, /No startup run is published yet/);
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /12,345 req\/s/);
  assert.deepEqual(publishedFigureProblems(root, files), []);

  // A figure typed over by hand.
  writeFileSync(join(root, 'docs', 'performance.md'), page.replace('| 12,345 |', '| 13,000 |'));
  const handEdit = publishedFigureProblems(root, files);
  assert.equal(handEdit.length, 1);
  assert.match(handEdit[0]!, /^docs\/performance\.md:\d+ block "main" differs .*found ".*13,000/);
  writeFileSync(join(root, 'docs', 'performance.md'), page);

  // The committed file replaced by another run, the docs not rendered again.
  const newer = mainRun();
  newer.scenarios.find((scenario) => scenario.id === 'A')!.targets.server!.median_rps = 11_111;
  writeFileSync(join(root, RESULT_FILES.main.published), JSON.stringify(newer));
  const stale = publishedFigureProblems(root, files);
  assert.deepEqual(stale.map((problem) => problem.split(' ')[0]!.replace(/:\d+$/, '')), ['README.md', 'docs/performance.md']);
  assert.match(stale[1]!, /expected ".*11,111.*", found ".*12,345/);
  publish({ root, from, only: [], log: () => {} });
  assert.deepEqual(publishedFigureProblems(root, files), [], 'rendering again from the committed file fixes it');
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /11,111 req\/s/);
});

test('publish refuses a file that is not a run of the kind asked for, and keeps the published one', (t) => {
  const { root, from } = sampleRepository(t);
  publish({ root, from, only: null, log: () => {} });
  const before = readFileSync(join(root, RESULT_FILES.main.published), 'utf8');
  writeFileSync(join(from, RESULT_FILES.main.bench), JSON.stringify({ ...mainRun(), kind: 'scale' }));
  assert.throws(() => publish({ root, from, only: ['main'], log: () => {} }), /holds a "scale" run, not a "main" run/);
  writeFileSync(join(from, RESULT_FILES.main.bench), '{"kind": "main", "started_at": ');
  assert.throws(() => publish({ root, from, only: ['main'], log: () => {} }), /is not valid JSON/);
  assert.throws(() => publish({ root, from, only: ['startup'], log: () => {} }), /no .*latest-startup\.json: run npm run bench -- --startup first/);
  assert.equal(readFileSync(join(root, RESULT_FILES.main.published), 'utf8'), before);
  assert.equal(readPublished(root).main?.started_at, '2031-02-03T04:05:06.000Z');
});

test('npm run bench:publish with an empty results folder exits 1 and says to run the bench first', { timeout: 60_000 }, (t) => {
  const from = temporaryDir(t);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'publish.ts'), '--from', from], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /holds none of latest\.json, latest-scale\.json, latest-startup\.json, latest-compaction\.json: run npm run bench first/);
});

test('this repository: every results block in README.md and docs/ matches the committed result files', () => {
  assert.deepEqual(publishedFigureProblems(ROOT, documentationFiles(ROOT)), []);
  assert.ok(findMarkedBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).blocks.some((block) => block.name === 'summary'));
  assert.deepEqual(
    findMarkedBlocks(readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8')).blocks.map((block) => block.name),
    ['main', 'scale', 'startup', 'compaction'],
  );
});
