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

/** Calls `visit` for every newline-terminated line; bytes after the last newline are not visited. */
export function readLines(path: string, visit: (line: LineVisit) => void): LinesSummary {
  const fd = openSync(path, 'r');
  try {
    const fileSize = fstatSync(fd).size;
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = 0;
    let position = 0;
    let lineNumber = 0;
    let completeLength = 0;
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    while (position < fileSize) {
      const bytesRead = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const dataOffset = carry.length > 0 ? carryOffset : position;
      let start = 0;
      let newline = data.indexOf(NEWLINE, start);
      while (newline !== -1) {
        lineNumber += 1;
        visit({ text: data.toString('utf8', start, newline), lineNumber, offset: dataOffset + start });
        start = newline + 1;
        completeLength = dataOffset + start;
        newline = data.indexOf(NEWLINE, start);
      }
      carry = Buffer.from(data.subarray(start));
      carryOffset = dataOffset + start;
      position += bytesRead;
    }
    return { completeLength, fileSize, lineCount: lineNumber };
  } finally {
    closeSync(fd);
  }
}
