// Loads the log into memory: the header is checked, each line replayed in order (the last
// line for an id wins, deletions remove it), a torn last line dropped with a warning, and a
// damaged line anywhere else stops the start with its position. A log from a newer release
// stops the start too (LogVersionError). Loading never writes.

import { decodeLine, LineFormatError, parseHeader, type StoredRecord } from './format.ts';
import { MAX_LINE_BYTES, readLines } from './lines.ts';
import type { LoadSink } from './log.ts';

/** Every record the file loads gets this version: nothing was decided on them yet. */
export const LOADED_VERSION = 1;

export interface ReplayResult {
  /** Length of the valid log; anything beyond is a torn tail to cut before the next append. */
  goodLength: number;
  /** Operations in the log (live and superseded), for the compaction trigger. */
  opsInLog: number;
  tornTailBytes: number;
}

export class LogDamagedError extends Error {
  readonly lineNumber: number;
  readonly byteOffset: number;

  constructor(path: string, dataDir: string, lineNumber: number, byteOffset: number, reason: string) {
    super(
      `The data log ${path} is damaged at line ${lineNumber} (byte offset ${byteOffset}): ${reason}. ` +
        `The server will not start on a damaged log. Stop every server using it, then run ` +
        `"npm run cli -- repair --data-dir ${dataDir}" to keep every good record and move damaged lines aside.`,
    );
    this.name = 'LogDamagedError';
    this.lineNumber = lineNumber;
    this.byteOffset = byteOffset;
  }
}

/**
 * The common line, one well-formed put, parsed once and used as is; null for anything else
 * (batches, deletions, damage), which decodeLine then reads with its full checks and messages.
 * Accepts exactly the puts decodeLine accepts. It spares a million-record load an op object
 * and an array per line (profiled: allocation there is paid again in garbage collection).
 */
function singlePut(text: string): { c: string; id: string; d: StoredRecord } | null {
  let envelope: { op?: unknown; c?: unknown; id?: unknown; d?: unknown } | null;
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    return null;
  }
  if (typeof envelope !== 'object' || envelope === null || envelope.op !== 'put') return null;
  const { c, id, d } = envelope;
  if (typeof c !== 'string' || typeof id !== 'string' || typeof d !== 'object' || d === null || (d as StoredRecord).id !== id) return null;
  return { c, id, d: d as StoredRecord };
}

/** Why a line too long to be a write is damage (also the reason `repair` gives). */
export function oversizedReason(bytes: number): string {
  return `a line of ${bytes} bytes, longer than the largest write the server makes (${MAX_LINE_BYTES} bytes)`;
}

/** Replays the log at `path` into `sink` (the last line for an id wins). */
export function replayLog(path: string, dataDir: string, warn: (message: string) => void, sink: LoadSink): ReplayResult {
  let opsInLog = 0;
  let sawHeader = false;
  const summary = readLines(path, ({ text, lineNumber, offset }) => {
    try {
      if (!sawHeader) {
        parseHeader(text, path);
        sawHeader = true;
        return;
      }
      const put = singlePut(text);
      if (put !== null) {
        opsInLog += 1;
        sink.put(put.c, put.d, LOADED_VERSION);
        return;
      }
      for (const op of decodeLine(text)) {
        opsInLog += 1;
        if (op.op === 'put') sink.put(op.collection, op.data, LOADED_VERSION);
        else sink.remove(op.collection, op.id, LOADED_VERSION);
      }
    } catch (error) {
      if (error instanceof LineFormatError) throw new LogDamagedError(path, dataDir, lineNumber, offset, error.message);
      throw error;
    }
  }, {
    oversized: ({ lineNumber, offset, bytes }) => {
      throw new LogDamagedError(path, dataDir, lineNumber, offset, oversizedReason(bytes));
    },
  });
  if (!sawHeader) {
    throw new LogDamagedError(path, dataDir, 1, 0, 'the header line is missing or incomplete');
  }
  const tornTailBytes = summary.fileSize - summary.completeLength;
  if (tornTailBytes > 0) {
    warn(
      `Dropped an incomplete last record (${tornTailBytes} bytes at byte offset ${summary.completeLength}) in ${path}: ` +
        'a write was cut off by a crash before it was acknowledged.',
    );
  }
  return { goodLength: summary.completeLength, opsInLog, tornTailBytes };
}
