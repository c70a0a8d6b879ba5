// Generated blocks inside markdown files: the text between `<!-- results:NAME:begin … -->` and
// `<!-- results:NAME:end -->` is written by a program, never by hand. This file finds those
// blocks, says which differ from what they should hold, and rewrites them.

/** One marked block of a markdown file. */
export interface MarkedBlock {
  name: string;
  /** 1-based lines of the begin and end markers. */
  beginLine: number;
  endLine: number;
  /** The lines between the markers. */
  body: string[];
}

export interface MarkedBlockProblem {
  line: number;
  problem: string;
}

const BEGIN = /^<!-- results:([a-z][a-z0-9-]*):begin\b.*-->\s*$/;
const END = /^<!-- results:([a-z][a-z0-9-]*):end -->\s*$/;
/** Anything that looks like a marker, so a misspelt one is reported rather than ignored. */
const ANY_MARKER = /^<!--\s*results\b/;

/** The begin marker as the writer puts it: it tells a reader of the raw file where the text comes from. */
export function beginMarker(name: string, origin: string): string {
  return `<!-- results:${name}:begin (written by ${origin}; npm run check:docs fails if it is edited by hand) -->`;
}

export function endMarker(name: string): string {
  return `<!-- results:${name}:end -->`;
}

/** The marked blocks of a markdown text, and what is malformed about its markers. */
export function findMarkedBlocks(markdown: string): { blocks: MarkedBlock[]; problems: MarkedBlockProblem[] } {
  const lines = markdown.split('\n');
  const blocks: MarkedBlock[] = [];
  const problems: MarkedBlockProblem[] = [];
  let open: { name: string; line: number } | null = null;
  for (const [index, line] of lines.entries()) {
    const begin = BEGIN.exec(line);
    const end = END.exec(line);
    if (begin) {
      if (open) problems.push({ line: open.line, problem: `block "${open.name}" has no end marker before the next begin marker` });
      open = { name: begin[1]!, line: index + 1 };
    } else if (end) {
      if (!open || open.name !== end[1]) {
        problems.push({ line: index + 1, problem: `end marker of "${end[1]}" without its begin marker` });
        continue;
      }
      blocks.push({ name: open.name, beginLine: open.line, endLine: index + 1, body: lines.slice(open.line, index) });
      open = null;
    } else if (ANY_MARKER.test(line)) {
      problems.push({ line: index + 1, problem: `not a valid marker (expected <!-- results:NAME:begin … --> or <!-- results:NAME:end -->): ${line.trim()}` });
    }
  }
  if (open) problems.push({ line: open.line, problem: `block "${open.name}" has no end marker` });
  return { blocks, problems };
}

/** The body lines a block holds when it shows `content`: the content set off by blank lines, so markdown after a comment renders. */
function bodyFor(content: string): string[] {
  return ['', ...content.replace(/\n+$/, '').split('\n'), ''];
}

/**
 * Where the blocks of `markdown` differ from what `render(name)` gives (null: no block of that
 * name exists). Each problem names the first differing line, so a hand edit is easy to find.
 */
export function staleBlocks(markdown: string, render: (name: string) => string | null): MarkedBlockProblem[] {
  const { blocks, problems } = findMarkedBlocks(markdown);
  for (const block of blocks) {
    const content = render(block.name);
    if (content === null) {
      problems.push({ line: block.beginLine, problem: `unknown block "${block.name}"` });
      continue;
    }
    const expected = bodyFor(content);
    const differs = expected.findIndex((line, index) => block.body[index] !== line);
    const at = differs >= 0 ? differs : expected.length < block.body.length ? expected.length : -1;
    if (at < 0) continue;
    const found = block.body[at];
    const wanted = expected[at];
    problems.push({
      line: block.beginLine + 1 + at,
      problem:
        `block "${block.name}" differs from what the published results render: ` +
        `expected ${wanted === undefined ? 'the end marker' : JSON.stringify(wanted)}, found ${found === undefined ? 'the end marker' : JSON.stringify(found)}`,
    });
  }
  return problems.sort((left, right) => left.line - right.line);
}

/** `markdown` with every marked block's body replaced by its rendering (markers kept, the begin one rewritten). */
export function rewriteBlocks(markdown: string, render: (name: string) => string | null, origin: string): string {
  const { blocks, problems } = findMarkedBlocks(markdown);
  if (problems.length > 0) throw new Error(problems.map((problem) => `line ${problem.line}: ${problem.problem}`).join('\n'));
  const lines = markdown.split('\n');
  // From the last block up, so earlier line numbers stay right.
  for (const block of [...blocks].reverse()) {
    const content = render(block.name);
    if (content === null) throw new Error(`line ${block.beginLine}: unknown block "${block.name}"`);
    lines.splice(block.beginLine - 1, block.endLine - block.beginLine + 1, beginMarker(block.name, origin), ...bodyFor(content), endMarker(block.name));
  }
  return lines.join('\n');
}
