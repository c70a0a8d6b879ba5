// Reads a file line by line in chunks, without holding the whole file in one string, so a log
// of a million records loads in seconds and bounded extra memory. A line longer than any write
// the store makes (MAX_LINE_BYTES) is never gathered or decoded: it is reported, with its line
// number, byte offset and length, for the caller to treat as damage.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface LineVisit {
  text: string;
  /** 1-based. */
  lineNumber: number;
  /** Byte offset of the line's first byte. */
  offset: number;
}

/** A line too long to be one of the store's writes; its bytes were skipped, not read into memory. */
export interface OversizedLine {
  lineNumber: number;
  offset: number;
  bytes: number;
}

export interface ReadLinesOptions {
  /** Lines longer than this many bytes go to `oversized` instead of `visit`. */
  maxLineBytes?: number;
  /** Told of each oversized line; without it, such a line throws. */
  oversized?: (line: OversizedLine) => void;
}

/**
 * The longest line the store writes (file-log.ts refuses a longer write) and the reader decodes:
 * well under V8's longest string (about 512 MiB), far over any request's write (a body is at
 * most 64 KiB; a batch holds a handful of records).
 */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;

export interface LinesSummary {
  /** Bytes up to and including the last newline: everything after it is a torn tail. */
  completeLength: number;
  fileSize: number;
  lineCount: number;
}

/**
 * Small enough that a chunk's decoded string is an ordinary young object, which dies cheaply
 * once its lines are parsed; 8 MiB chunks went to the large-object space and left ~100 MiB
 * more RSS and more full collections on a million-record load (measured).
 */
const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Calls `visit` for every newline-terminated line; bytes after the last newline are not visited.
 * Each chunk is decoded once and its lines are slices of that string: a decode per line costs
 * a native call and a copy per line (profiled). A line's `text` may share memory with its chunk.
 */
export function readLines(path: string, visit: (line: LineVisit) => void, options: ReadLinesOptions = {}): LinesSummary {
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  const oversized =
    options.oversized ??
    ((line: OversizedLine) => {
      throw new Error(`line ${line.lineNumber} (byte offset ${line.offset}) is ${line.bytes} bytes, longer than ${maxLineBytes}`);
    });
  const fd = openSync(path, 'r');
  try {
    const fileSize = fstatSync(fd).size;
    /** Bytes read after the last newline seen, in pieces, so a very long line is copied once. */
    let carry: Buffer[] = [];
    let carryBytes = 0;
    /** While skipping an oversized line: its bytes so far; -1 otherwise. */
    let skippedBytes = -1;
    let position = 0;
    let lineNumber = 0;
    let completeLength = 0;
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    /** Reports the oversized line ending here and moves past it and its newline. */
    const passOversized = (bytes: number): void => {
      lineNumber += 1;
      oversized({ lineNumber, offset: completeLength, bytes });
      completeLength += bytes + 1;
      skippedBytes = -1;
      carry = [];
      carryBytes = 0;
    };
    while (position < fileSize) {
      const bytesRead = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      let fresh = chunk.subarray(0, bytesRead);
      if (skippedBytes >= 0) {
        const newlineAt = fresh.indexOf(NEWLINE);
        if (newlineAt === -1) {
          skippedBytes += fresh.length;
          continue;
        }
        passOversized(skippedBytes + newlineAt);
        fresh = fresh.subarray(newlineAt + 1);
      }
      if (carryBytes > 0) {
        // Only a line that began in an earlier chunk can be too long.
        const newlineAt = fresh.indexOf(NEWLINE);
        const lineBytes = carryBytes + (newlineAt === -1 ? fresh.length : newlineAt);
        if (lineBytes > maxLineBytes) {
          if (newlineAt === -1) {
            // Too long already: stop gathering it and skip to its end.
            skippedBytes = lineBytes;
            carry = [];
            carryBytes = 0;
            continue;
          }
          passOversized(lineBytes);
          fresh = fresh.subarray(newlineAt + 1);
        }
      }
      const lastFreshNewline = fresh.lastIndexOf(NEWLINE);
      if (lastFreshNewline === -1) {
        if (fresh.length > 0) {
          carry.push(Buffer.from(fresh));
          carryBytes += fresh.length;
        }
        continue;
      }
      // `data` starts at `completeLength`: every byte before it has been visited.
      const data = carryBytes > 0 ? Buffer.concat([...carry, fresh], carryBytes + fresh.length) : fresh;
      const lastNewline = carryBytes + lastFreshNewline;
      // A newline byte is never part of a multi-byte character, so the lines decode whole.
      const text = data.toString('utf8', 0, lastNewline + 1);
      // Offsets are in bytes, positions in `text` in characters: they agree when every byte
      // decoded to one character (ASCII); otherwise each newline is also found in the bytes.
      const asciiOnly = text.length === lastNewline + 1;
      let start = 0;
      let byteStart = 0;
      let newline = text.indexOf('\n');
      while (newline !== -1) {
        lineNumber += 1;
        visit({ text: text.slice(start, newline), lineNumber, offset: completeLength + byteStart });
        start = newline + 1;
        byteStart = asciiOnly ? start : data.indexOf(NEWLINE, byteStart) + 1;
        newline = text.indexOf('\n', start);
      }
      completeLength += lastNewline + 1;
      carryBytes = data.length - (lastNewline + 1);
      carry = carryBytes > 0 ? [Buffer.from(data.subarray(lastNewline + 1))] : [];
      if (carryBytes > maxLineBytes) {
        skippedBytes = carryBytes;
        carry = [];
        carryBytes = 0;
      }
    }
    return { completeLength, fileSize, lineCount: lineNumber };
  } finally {
    closeSync(fd);
  }
}
