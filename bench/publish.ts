// `npm run bench:publish`: makes a bench run the one the docs show. It copies the run's result
// file(s) from bench/results/ (git-ignored) to the committed docs/performance-results*.json,
// byte for byte, then rewrites every marked results block of README.md and docs/*.md from the
// committed files. `npm run check:docs` fails when a block differs from what they render.
// Usage: npm run bench:publish [-- --only main,scale,startup,compaction] [--from DIR] [--render-only]

import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { rewriteBlocks } from './marked-blocks.ts';
import { parseResults, PUBLISH_COMMAND, readPublished, renderBlock, RESULT_FILES, RESULT_KINDS, type ResultKind } from './published-figures.ts';

const USAGE = `${PUBLISH_COMMAND} [-- options]
  Copies the latest bench run(s) from bench/results/ into the committed docs/performance-results*.json
  and rewrites the results blocks of README.md and docs/*.md from them.
  --only main,scale,startup,compaction  which runs to publish (default: each of latest.json, latest-scale.json,
                             latest-startup.json and latest-compaction.json that bench/results/ holds; the others
                             stay as published)
  --from DIR                 take the runs from DIR instead of bench/results/
  --render-only              copy nothing: only rewrite the blocks from the committed files`;

export interface PublishOptions {
  /** The repository whose docs are rewritten. */
  root: string;
  /** Where the bench wrote its results. */
  from: string;
  /** Which runs to copy (null: each one `from` holds); an empty list copies nothing. */
  only: ResultKind[] | null;
  log: (line: string) => void;
}

/** Copies the chosen runs, then rewrites the blocks; returns the files it changed, relative to root. */
export function publish(options: PublishOptions): string[] {
  const { root, from, log } = options;
  const kinds = options.only ?? RESULT_KINDS.filter((kind) => existsSync(join(from, RESULT_FILES[kind].bench)));
  if (options.only === null && kinds.length === 0) {
    throw new Error(`${from} holds none of ${RESULT_KINDS.map((kind) => RESULT_FILES[kind].bench).join(', ')}: run ${RESULT_FILES.main.command} first`);
  }
  const changed: string[] = [];
  for (const kind of kinds) {
    const source = join(from, RESULT_FILES[kind].bench);
    if (!existsSync(source)) throw new Error(`no ${source}: run ${RESULT_FILES[kind].command} first`);
    // Checked before copying, so a file of the wrong kind or a broken one never replaces a good one.
    const run = parseResults(readFileSync(source, 'utf8'), kind, source);
    copyFileSync(source, join(root, RESULT_FILES[kind].published));
    changed.push(RESULT_FILES[kind].published);
    log(`${RESULT_FILES[kind].published}: the ${kind} run of ${run.started_at} at commit ${run.git_commit?.slice(0, 10) ?? '?'} (from ${source})`);
    const warnings = (run as { warnings?: string[] }).warnings ?? [];
    for (const warning of warnings) log(`  the bench warned: ${warning}`);
  }
  const published = readPublished(root);
  for (const file of markdownFiles(root)) {
    const doc = relative(root, file);
    const before = readFileSync(file, 'utf8');
    const after = rewriteBlocks(before, (name) => renderBlock(name, published, doc), PUBLISH_COMMAND);
    if (after === before) continue;
    writeFileSync(file, after);
    changed.push(doc);
    log(`${doc}: results blocks rewritten`);
  }
  return changed;
}

/** README.md and docs/*.md, where results blocks may be. */
function markdownFiles(root: string): string[] {
  const docs = join(root, 'docs');
  const inDocs = existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')).sort().map((name) => join(docs, name)) : [];
  return [join(root, 'README.md'), ...inDocs].filter((file) => existsSync(file));
}

function parseKinds(raw: string): ResultKind[] {
  return raw.split(',').map((name) => {
    const kind = name.trim() as ResultKind;
    if (!RESULT_KINDS.includes(kind)) throw new Error(`--only takes ${RESULT_KINDS.join(', ')}; got "${name}"`);
    return kind;
  });
}

function main(): void {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      from: { type: 'string' },
      'render-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const root = resolve(import.meta.dirname, '..');
  const changed = publish({
    root,
    from: resolve(values.from ?? join(root, 'bench', 'results')),
    only: values['render-only'] ? [] : values.only === undefined ? null : parseKinds(values.only),
    log: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(changed.length === 0 ? 'nothing changed\n' : `changed: ${changed.join(', ')} (commit them together)\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`bench:publish: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
