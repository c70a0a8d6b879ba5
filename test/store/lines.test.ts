// The chunked line reader: lines (and multi-byte characters) cut by chunk boundaries come out
// whole, with the right line numbers and byte offsets, and an unterminated tail is reported.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readLines, type LineVisit } from '../../src/store/lines.ts';
import { freshDataDir } from './helpers.ts';

/** What the reader must find: a plain split of the whole file, with byte offsets. */
function expectedLines(lines: readonly string[]): { visits: LineVisit[]; completeLength: number } {
  const visits: LineVisit[] = [];
  let offset = 0;
  for (const [index, text] of lines.entries()) {
    visits.push({ text, lineNumber: index + 1, offset });
    offset += Buffer.byteLength(text) + 1;
  }
  return { visits, completeLength: offset };
}

test('lines across chunk boundaries, longer than several chunks, and multi-byte text come out whole with byte offsets', (t) => {
  const dir = freshDataDir(t, 'lines');
  const path = join(dir, 'lines.txt');
  // About 600 KB: many chunk boundaries land inside lines and inside 2-, 3- and 4-byte characters.
  const lines: string[] = ['{"header":1}', ''];
  const pieces = ['a', 'é', '✓', '🙂'];
  for (let index = 0; index < 2_000; index += 1) {
    const piece = pieces[index % pieces.length]!;
    lines.push(`${index}:` + piece.repeat(1 + ((index * 37) % 120)));
  }
  lines.push('L'.repeat(200_000)); // a line spanning several chunks with no newline in them
  lines.push('🙂'.repeat(40_000));
  lines.push('last complete');
  const tail = '{"torn":';
  const content = Buffer.from(lines.join('\n') + '\n' + tail);
  writeFileSync(path, content);

  const { visits, completeLength } = expectedLines(lines);
  const seen: LineVisit[] = [];
  const summary = readLines(path, (line) => seen.push({ text: line.text, lineNumber: line.lineNumber, offset: line.offset }));
  assert.equal(seen.length, visits.length);
  for (const [index, visit] of visits.entries()) assert.deepEqual(seen[index], visit, `line ${index + 1}`);
  assert.deepEqual(summary, { completeLength, fileSize: content.length, lineCount: lines.length });
});

test('an empty file and a file without any newline have no lines', (t) => {
  const dir = freshDataDir(t, 'lines');
  const empty = join(dir, 'empty');
  writeFileSync(empty, '');
  assert.deepEqual(readLines(empty, () => assert.fail('no line expected')), { completeLength: 0, fileSize: 0, lineCount: 0 });
  const noNewline = join(dir, 'partial');
  writeFileSync(noNewline, 'x'.repeat(150_000));
  assert.deepEqual(readLines(noNewline, () => assert.fail('no line expected')), { completeLength: 0, fileSize: 150_000, lineCount: 0 });
});

test('a line over the limit is reported (number, offset, length), never decoded; the lines around it come out whole', (t) => {
  const dir = freshDataDir(t, 'lines');
  const path = join(dir, 'oversized.txt');
  const limit = 100_000;
  // Oversized lines that end inside a later chunk, right at a chunk's start, and at the file's end.
  const lines = ['first', 'x'.repeat(150_000), 'between', '🙂'.repeat(30_000), 'y'.repeat(limit), 'z'.repeat(65_536 * 3 - 1), 'last'];
  writeFileSync(path, lines.join('\n') + '\n' + 'w'.repeat(300_000));
  const { visits } = expectedLines(lines);
  const seen: LineVisit[] = [];
  const oversized: { lineNumber: number; offset: number; bytes: number }[] = [];
  const summary = readLines(path, (line) => seen.push({ ...line }), { maxLineBytes: limit, oversized: (line) => oversized.push(line) });
  const isLong = (visit: LineVisit): boolean => Buffer.byteLength(visit.text) > limit;
  assert.deepEqual(seen, visits.filter((visit) => !isLong(visit)));
  assert.deepEqual(oversized, visits.filter(isLong).map((visit) => ({ lineNumber: visit.lineNumber, offset: visit.offset, bytes: Buffer.byteLength(visit.text) })));
  assert.equal(summary.lineCount, lines.length);
  assert.equal(summary.fileSize - summary.completeLength, 300_000, 'an oversized torn tail is still a torn tail');
  assert.throws(() => readLines(path, () => {}, { maxLineBytes: limit }), /line 2 \(byte offset 6\) is 150000 bytes/);
});
