// A node:test reporter for logs (CI, a pipe): every failure in full, one line per test file,
// what was skipped and why, then node's own counts (# tests, # pass, # fail …). On a terminal
// `npm test` uses node's spec reporter instead (test/run.ts chooses). Plain JavaScript: node loads reporters before tsx..

const PROGRESS_EVERY = 100;

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* summaryReporter(source) {
  /** @type {Map<string, { passed: number, failed: number, skipped: number, durationMs: number }>} */
  const files = new Map();
  const skipped = [];
  const counts = [];
  /** Names of the tests under way, by nesting, so a failing subtest is named with its parents. */
  const path = [];
  // A line every PROGRESS_EVERY finished top-level tests, so a redirected log shows it is alive.
  let finished = 0;
  let failedSoFar = 0;
  for await (const { type, data } of source) {
    if (type === 'test:start') {
      path[data.nesting] = data.name;
      path.length = data.nesting + 1;
    } else if (type === 'test:pass' || type === 'test:fail') {
      const file = relativeFile(data.file);
      const tally = files.get(file) ?? { passed: 0, failed: 0, skipped: 0, durationMs: 0 };
      files.set(file, tally);
      const title = [...path.slice(0, data.nesting), data.name].join(' › ');
      if (data.nesting === 0) {
        tally.durationMs += data.details?.duration_ms ?? 0;
        finished += 1;
        if (type === 'test:fail') failedSoFar += 1;
        if (finished % PROGRESS_EVERY === 0) yield `… ${finished} tests finished, ${failedSoFar} failed so far\n`;
      }
      if (data.skip || data.todo) {
        tally.skipped += 1;
        skipped.push(`- ${file}: ${title}${typeof data.skip === 'string' ? ` (${data.skip})` : ''}`);
      } else if (type === 'test:pass') tally.passed += 1;
      else if (!isParentOfFailure(data.details?.error)) {
        tally.failed += 1;
        yield `\n✖ ${file}: ${title}\n${indent(describeError(data.details?.error))}\n`;
      }
    } else if (type === 'test:stderr' || type === 'test:stdout') {
      if (data.message) yield data.message;
    } else if (type === 'test:diagnostic' && data.nesting === 0 && data.message) {
      counts.push(`# ${data.message}`);
    }
  }
  yield '\nfiles:\n';
  for (const [file, tally] of [...files].sort(([left], [right]) => left.localeCompare(right))) {
    const mark = tally.failed > 0 ? '✖' : '✔';
    const extras = [tally.failed > 0 ? `${tally.failed} failed` : '', tally.skipped > 0 ? `${tally.skipped} skipped` : ''].filter(Boolean).join(', ');
    yield `${mark} ${file}  ${tally.passed} passed${extras ? `, ${extras}` : ''}  ${(tally.durationMs / 1000).toFixed(1)} s\n`;
  }
  if (skipped.length > 0) yield `\nskipped:\n${skipped.join('\n')}\n`;
  yield `\n${counts.join('\n')}\n`;
}

/** A test whose subtests failed fails too; only the subtests are worth showing. */
function isParentOfFailure(error) {
  return error?.failureType === 'subtestsFailed';
}

function describeError(error) {
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
  return text.split('\n').slice(0, 30).join('\n');
}

function indent(text) {
  return text.replace(/^/gm, '    ');
}

function relativeFile(file) {
  if (file === undefined) return '(unknown file)';
  const cwd = `${process.cwd()}/`;
  return file.startsWith('file://') ? relativeFile(new URL(file).pathname) : file.startsWith(cwd) ? file.slice(cwd.length) : file;
}
