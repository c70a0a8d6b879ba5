// src/README.md, the map for a newcomer, stays true: every path it names exists, every link
// resolves, every step of its walks starts at a file, and every function it names with
// parentheses (`name()` or `Class.name()`) is defined in the file named last before it in the
// same step. Read as text, the way a reader would follow it; a rename in the code without the
// map fails here and names the step.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = resolve(ROOT, 'src');
const MAP = resolve(SRC, 'README.md');
const MAX_LINES = 120;

/** A path as the map writes it: `store/file-log.ts` from src/, or `src/…`, `docs/…`, `test/…` from the repository; a folder ends in `/`. */
const PATH_SPAN = /^[\w.-]+(?:\/[\w.-]+)*(?:\.(?:ts|js|md|json)|\/)$/;
const FUNCTION_SPAN = /^(?:([A-Z][\w$]*)\.)?([A-Za-z_$][\w$]*)\(\)$/;
const FROM_ROOT = ['src/', 'docs/', 'test/', 'bench/'];

/** A block of the map: one list item (with its wrapped lines) or one paragraph, with the heading it sits under. */
interface Block {
  heading: string;
  line: number;
  text: string;
  isStep: boolean;
}

function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  let heading = '';
  let current: Block | null = null;
  markdown.split('\n').forEach((text, index) => {
    if (text.startsWith('#')) {
      heading = text.replace(/^#+\s*/, '');
      current = null;
    } else if (text.trim() === '') {
      current = null;
    } else if (/^(?:\d+\.|-)\s/.test(text) || current === null) {
      current = { heading, line: index + 1, text, isStep: /^\d+\.\s/.test(text) };
      blocks.push(current);
    } else {
      current.text += `\n${text}`;
    }
  });
  return blocks;
}

function pathOnDisk(span: string): string {
  return FROM_ROOT.some((prefix) => span.startsWith(prefix)) ? resolve(ROOT, span) : resolve(SRC, span);
}

/** Whether `source` defines `name`: `function name`, a method `name(…) {`, or `name =` (a simple textual check). */
function defines(source: string, name: string): boolean {
  const escaped = name.replace(/\$/g, '\\$');
  const modifiers = '(?:(?:public|private|protected|static|async|override|get|set)\\s+)*';
  return (
    new RegExp(`\\bfunction\\*?\\s+${escaped}\\b`).test(source) ||
    // A method's opening line: `name(…) {`, or `name(` with its parameters on the next lines (a call's line ends in `;`).
    new RegExp(`^\\s*${modifiers}${escaped}\\s*(?:<[^>\\n]*>)?\\s*\\((?:[^\\n]*\\{)?\\s*$`, 'm').test(source) ||
    // A declaration (`const name =`) or a field or assignment opening its line (`name = …`, `private name: T =`).
    new RegExp(`(?:\\b(?:const|let|var)\\s+|^\\s*(?:(?:private|public|protected|readonly|static)\\s+)*)${escaped}\\s*(?::[^=\\n]+)?=(?![=>])`, 'm').test(source)
  );
}

/** Every problem of the map at `markdown`, and what it checked (so an empty parse cannot pass). */
function mapProblems(markdown: string): { problems: string[]; paths: number; functions: number } {
  const problems: string[] = [];
  let paths = 0;
  let functions = 0;
  const lines = markdown.replace(/\n$/, '').split('\n').length;
  if (lines > MAX_LINES) problems.push(`src/README.md has ${lines} lines; at most ${MAX_LINES}`);
  for (const block of blocksOf(markdown)) {
    const where = `src/README.md:${block.line} (${block.heading})`;
    for (const [, target] of block.text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      if (!existsSync(resolve(SRC, target!))) problems.push(`${where}: the link ${target} leads nowhere`);
    }
    const spans = [...block.text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    if (block.isStep && block.heading.startsWith('Walk') && !PATH_SPAN.test(spans[0] ?? '')) {
      problems.push(`${where}: a step of a walk starts with the file it is in, found ${spans[0] ?? 'nothing'}`);
    }
    let file: string | null = null;
    for (const span of spans) {
      if (PATH_SPAN.test(span)) {
        paths += 1;
        const onDisk = pathOnDisk(span);
        if (!existsSync(onDisk)) problems.push(`${where}: ${span} does not exist`);
        file = span.endsWith('/') || !existsSync(onDisk) ? null : onDisk;
        continue;
      }
      const named = FUNCTION_SPAN.exec(span);
      if (named === null) continue;
      functions += 1;
      const [, className, name] = named;
      if (file === null) {
        problems.push(`${where}: ${span} follows no file that exists`);
        continue;
      }
      const source = readFileSync(file, 'utf8');
      const shortFile = file.slice(SRC.length + 1);
      if (className !== undefined && !new RegExp(`\\bclass\\s+${className}\\b`).test(source)) problems.push(`${where}: ${shortFile} has no class ${className} (for ${span})`);
      if (!defines(source, name!)) problems.push(`${where}: ${shortFile} does not define ${name} (for ${span})`);
    }
  }
  return { problems, paths, functions };
}

test('src/README.md: every path exists, every link resolves, every named function is in its file', () => {
  const { problems, paths, functions } = mapProblems(readFileSync(MAP, 'utf8'));
  assert.deepEqual(problems, []);
  // Both walks are there and were read: dozens of files and functions, not an empty parse.
  assert.ok(paths >= 40, `${paths} paths checked`);
  assert.ok(functions >= 40, `${functions} functions checked`);
});

test('the check catches a wrong path, a wrong function, a function under the wrong file and a step without a file', () => {
  const map = [
    '## Walk 9: a test',
    '',
    '1. `store/no-such-file.ts` `commit()` is gone.',
    '2. `store/store.ts` `Store.noSuchMethod()` and `Router.match()`.',
    '3. `server.ts` `respond()`, then `router.ts` `respond()`.',
    '4. `dispatch()` with no file.',
    '5. See [the map](../docs/no-such-doc.md).',
  ].join('\n');
  const { problems } = mapProblems(map);
  const expected = [
    /:3 .*store\/no-such-file\.ts does not exist/,
    /:3 .*commit\(\) follows no file/,
    /:4 .*does not define noSuchMethod/,
    /:4 .*store\/store\.ts has no class Router/,
    /:4 .*store\/store\.ts does not define match/,
    /:5 .*router\.ts does not define respond/,
    /:6 .*starts with the file it is in/,
    /:6 .*dispatch\(\) follows no file/,
    /:7 .*starts with the file it is in, found nothing/,
    /:7 .*the link \.\.\/docs\/no-such-doc\.md leads nowhere/,
  ];
  for (const pattern of expected) assert.ok(problems.some((problem) => pattern.test(problem)), `${pattern} in:\n${problems.join('\n')}`);
  assert.equal(problems.length, expected.length, problems.join('\n'));
});
