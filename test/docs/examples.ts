// Reads the runnable examples out of a markdown file and judges a documented JSON answer
// against the one the server gave. The conventions, which docs/development.md repeats:
//
// - A block fenced ```sh (or bash, shell) is run. All blocks of one file run in order in ONE
//   bash session against a fresh server, so a variable set in one block is there in the next.
//   ```sh norun shows a command that is not run (it starts a server, needs root, runs for
//   minutes); ```text, ```ini and the others are never run.
// - Every curl must answer 2xx, unless its line ends with a note of the status it shows,
//   `# → 404`. Any other failing command (non-zero exit, in a pipeline too) fails the block.
// - A ```json block that follows a run block with nothing but blank lines between them is
//   that block's documented answer: the LAST JSON value the block printed must match it.
//   ```json norun after a block is shown but not checked.
// - A ```text block in the same place is the block's printed output, line by line: the same
//   number of non-blank lines, each equal, or matching around its `…` as below. ```text norun
//   shows an output that changes from run to run (counters, times) and is not checked.
// - In a documented answer: `"…"` stands for any value; a string holding `…` matches any string
//   with the text around the `…` (`"lst_…"`); ids (`lst_…` style), times (ISO 8601) and the
//   fields in VOLATILE_FIELDS match any value of their kind; `"…": "…"` in an object allows more
//   fields, `"…"` as an array's last element allows more elements. Anything else must be equal.
// - The docs write the server as http://127.0.0.1:3000 and Ada Creator's demo key, which the
//   reader pastes, as market_live_…; the checker puts in the real address and key.

/** A fenced block of a markdown file. */
export interface FencedBlock {
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** Words after the language: `norun`. */
  flags: string[];
  text: string;
}

/** A block to run, with the answer documented after it (null: none). */
export interface RunnableExample {
  line: number;
  script: string;
  expected: { line: number; value: unknown } | null;
  /** The documented output of a ```text block after it (null: none). */
  expectedText: { line: number; lines: string[] } | null;
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);

/** Every fenced block, with the prose between blocks checked only for being blank. */
export function fencedBlocks(markdown: string): Array<FencedBlock & { blankBefore: boolean }> {
  const lines = markdown.split('\n');
  const blocks: Array<FencedBlock & { blankBefore: boolean }> = [];
  let open: { line: number; fence: string; language: string; flags: string[]; body: string[] } | null = null;
  let blankSinceLastBlock = false;
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index]!;
    if (open === null) {
      const fence = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*(.*)$/.exec(raw);
      if (fence) {
        const flags = fence[4]!.split(/\s+/).filter(Boolean);
        open = { line: index + 1, fence: fence[2]!, language: fence[3]!.toLowerCase(), flags, body: [] };
      } else if (raw.trim() !== '') {
        blankSinceLastBlock = false;
      }
      continue;
    }
    if (raw.trim().startsWith(open.fence) && raw.trim().replace(/[`~]/g, '') === '') {
      blocks.push({ line: open.line, language: open.language, flags: open.flags, text: open.body.join('\n'), blankBefore: blankSinceLastBlock });
      open = null;
      blankSinceLastBlock = true;
      continue;
    }
    open.body.push(raw);
  }
  return blocks;
}

/** The blocks the checker runs, each with its documented answer when one follows it. */
export function runnableExamples(markdown: string): RunnableExample[] {
  const blocks = fencedBlocks(markdown);
  const examples: RunnableExample[] = [];
  for (let index = 0; index < blocks.length; index += 1) {
    const block = blocks[index]!;
    if (!SHELL_LANGUAGES.has(block.language) || block.flags.includes('norun')) continue;
    const next = blocks[index + 1];
    let expected: RunnableExample['expected'] = null;
    if (next && next.language === 'json' && next.blankBefore && !next.flags.includes('norun')) {
      try {
        expected = { line: next.line, value: JSON.parse(next.text) };
      } catch (error) {
        throw new Error(`line ${next.line}: the documented answer is not valid JSON (${(error as Error).message}); write "…" inside strings, or fence it as json norun`);
      }
    }
    const expectedText = next && next.language === 'text' && next.blankBefore && !next.flags.includes('norun') ? { line: next.line, lines: nonBlankLines(next.text) } : null;
    examples.push({ line: block.line, script: block.text, expected, expectedText });
  }
  return examples;
}

/** Fields whose value changes from run to run: only their kind (string, number, …) is compared. */
export const VOLATILE_FIELDS = new Set([
  'id', 'key', 'secret', 'request_id', 'created_at', 'updated_at', 'revoked_at', 'last_used_at', 'at', 'reset',
  'from', 'to', 'start', 'file', 'bytes', 'bytes_before', 'bytes_after', 'uptime_seconds', 'side_file', 'original',
]);

const ELLIPSIS = '…';
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const PREFIXED_ID = /^([a-z]+)_[A-Za-z0-9]{6,}$/;

/** Differences between a documented answer and a real one, as `path: what` lines (empty: they match). */
export function compareAnswer(expected: unknown, actual: unknown, path = '$', field = ''): string[] {
  if (expected === ELLIPSIS) return [];
  if (typeof expected === 'string' && typeof actual === 'string') {
    if (expected.includes(ELLIPSIS)) return matchesAround(expected, actual) ? [] : [`${path}: "${actual}" does not fit "${expected}"`];
    if (ISO_TIME.test(expected) && ISO_TIME.test(actual)) return [];
    const idKind = PREFIXED_ID.exec(expected);
    if (idKind && actual.startsWith(`${idKind[1]}_`)) return [];
  }
  if (VOLATILE_FIELDS.has(field) || field.endsWith('_id')) {
    return kindOf(expected) === kindOf(actual) ? [] : [`${path}: expected a ${kindOf(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    const open = expected.length > 0 && expected[expected.length - 1] === ELLIPSIS;
    const items = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return [`${path}: expected ${open ? 'at least ' : ''}${items.length} elements, got ${actual.length}`];
    }
    return items.flatMap((item, index) => compareAnswer(item, actual[index], `${path}[${index}]`, field));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const documented = expected as Record<string, unknown>;
    const real = actual as Record<string, unknown>;
    const problems: string[] = [];
    for (const [name, value] of Object.entries(documented)) {
      if (name === ELLIPSIS) continue;
      if (!(name in real)) problems.push(`${path}.${name}: documented but missing`);
      else problems.push(...compareAnswer(value, real[name], `${path}.${name}`, name));
    }
    if (!(ELLIPSIS in documented)) {
      for (const name of Object.keys(real)) if (!(name in documented)) problems.push(`${path}.${name}: in the answer but not documented`);
    }
    return problems;
  }
  return Object.is(expected, actual) ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** Differences between a documented text output and the printed one, line by line (empty: they match). */
export function compareText(documented: string[], printed: string): string[] {
  const actual = nonBlankLines(printed);
  if (actual.length !== documented.length) return [`expected ${documented.length} lines, printed ${actual.length}: ${JSON.stringify(actual.join('\n'))}`];
  return documented.flatMap((line, index) => {
    const got = actual[index]!;
    const fits = line.includes(ELLIPSIS) ? matchesAround(line, got) : line === got;
    return fits ? [] : [`line ${index + 1}: printed ${JSON.stringify(got)}, documented ${JSON.stringify(line)}`];
  });
}

function nonBlankLines(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/\s+$/, '')).filter((line) => line !== '');
}

/** "lst_…" matches "lst_abc"; "a…b…c" matches text with a, b, c in that order, starting with a and ending with c. */
function matchesAround(pattern: string, text: string): boolean {
  const pieces = pattern.split(ELLIPSIS);
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (!text.startsWith(first) || !text.endsWith(last) || text.length < first.length + last.length) return false;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = text.indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return at <= text.length - last.length;
}

/** The JSON values printed one after another (each curl's answer, each CLI result), in order. */
export function jsonValuesIn(output: string): unknown[] {
  const values: unknown[] = [];
  let index = 0;
  while (index < output.length) {
    const start = output.slice(index).search(/[[{]/);
    if (start < 0) break;
    const from = index + start;
    const end = endOfValue(output, from);
    if (end < 0) break;
    try {
      values.push(JSON.parse(output.slice(from, end)));
      index = end;
    } catch {
      index = from + 1;
    }
  }
  return values;
}

/** Where the bracketed JSON value starting at `from` ends (exclusive), or -1. */
function endOfValue(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}
