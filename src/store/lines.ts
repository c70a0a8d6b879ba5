// Reads a file line by line in large chunks, without holding the whole file in one string,
// so a log of a million records loads in seconds and bounded extra memory.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface LineVisit {
  text: string;
  /** 1-based. */
  lineNumber: number;
  /** Byte offset of the line's first byte. */
  offset: number;
}

export interface LinesSummary {
  /** Bytes up to and including the last newline: everything after it is a torn tail. */
  completeLength: number;
  fileSize: number;
  lineCount: number;
}

const CHUNK_BYTES = 8 * 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Calls `visit` for every newline-terminated line; bytes after the last newline are not visited.
 * Each chunk is decoded once and its lines are slices of that string: a per-line decode would
 * copy every line and leave as much garbage as the records themselves, which makes the young
 * generation collections of a million-record load copy far more (profiled). A line's `text`
 * may therefore share memory with its chunk.
 */
export function readLines(path: string, visit: (line: LineVisit) => void): LinesSummary {
  const fd = openSync(path, 'r');
  try {
    const fileSize = fstatSync(fd).size;
    let carry: Buffer = Buffer.alloc(0);
    let position = 0;
    let lineNumber = 0;
    let completeLength = 0;
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    while (position < fileSize) {
      const bytesRead = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      // Every byte before `completeLength` has been visited; `data` starts right there.
      const dataOffset = completeLength;
      const lastNewline = data.lastIndexOf(NEWLINE);
      if (lastNewline !== -1) {
        // A newline byte is never part of a multi-byte character, so the lines decode whole.
        const text = data.toString('utf8', 0, lastNewline + 1);
        // Offsets are in bytes, positions in `text` in characters: they agree until the first
        // non-ASCII character, after which each newline is also looked up in the bytes.
        const asciiOnly = text.length === lastNewline + 1;
        let start = 0;
        let byteStart = 0;
        let newline = text.indexOf('\n');
        while (newline !== -1) {
          lineNumber += 1;
          visit({ text: text.slice(start, newline), lineNumber, offset: dataOffset + byteStart });
          start = newline + 1;
          byteStart = asciiOnly ? start : data.indexOf(NEWLINE, byteStart) + 1;
          newline = text.indexOf('\n', start);
        }
        completeLength = dataOffset + lastNewline + 1;
      }
      carry = Buffer.from(data.subarray(lastNewline + 1));
      position += bytesRead;
    }
    return { completeLength, fileSize, lineCount: lineNumber };
  } finally {
    closeSync(fd);
  }
}
