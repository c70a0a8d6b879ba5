// The log's line format. Line 1 is a header naming the format and its version; every other
// line is one envelope: a single put/del, or a batch of them that must land together.

export const LOG_FORMAT = 'marketplace-api-log';
export const LOG_VERSION = 1;
export const LOG_FILE_NAME = 'marketplace.log';
/** Temporary files beside the log (compaction, creation, repair) end with this; one left at start is discarded. */
export const TEMP_SUFFIX = '.tmp';

export interface StoredRecord {
  readonly id: string;
}

export type WriteOp =
  /**
   * `json`: JSON.stringify(data), when the writer made it anyway (for its answer); the log line reuses it.
   * `ordered`: the record carries a `seq` that a log shared by many servers sets at commit (log.ts, point 8).
   */
  | { op: 'put'; collection: string; id: string; data: StoredRecord; json?: string; ordered?: true }
  | { op: 'del'; collection: string; id: string };

interface PutLine {
  op: 'put';
  c: string;
  id: string;
  d: StoredRecord;
}
interface DelLine {
  op: 'del';
  c: string;
  id: string;
}
interface BatchLine {
  op: 'batch';
  ops: Array<PutLine | DelLine>;
}

export function headerLine(createdAtIso: string): string {
  return JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, created_at: createdAtIso }) + '\n';
}

/** One line for one write: a batch envelope when several ops must be atomic. */
export function encodeWrite(ops: readonly WriteOp[]): string {
  if (ops.length === 1) return opText(ops[0]!) + '\n';
  return `{"op":"batch","ops":[${ops.map(opText).join(',')}]}\n`;
}

/** JSON.stringify(toLine(op)), reusing the record's JSON text when the writer gave it. */
function opText(op: WriteOp): string {
  if (op.op === 'put' && op.json !== undefined) return `{"op":"put","c":${JSON.stringify(op.collection)},"id":${JSON.stringify(op.id)},"d":${op.json}}`;
  return JSON.stringify(toLine(op));
}

function toLine(op: WriteOp): PutLine | DelLine {
  return op.op === 'put' ? { op: 'put', c: op.collection, id: op.id, d: op.data } : { op: 'del', c: op.collection, id: op.id };
}

export class LineFormatError extends Error {}

/** The log was written by a newer release: nothing here may read or change it. */
export class LogVersionError extends Error {
  readonly version: number;

  constructor(version: number, path: string) {
    super(
      `The data log ${path} is format version ${version}, newer than this release understands (version ${LOG_VERSION}). ` +
        'It was written by a newer release of marketplace-api: run that release (or a later one), or restore a backup made by this one. ' +
        'The log was left unchanged.',
    );
    this.name = 'LogVersionError';
    this.version = version;
  }
}

/**
 * Checks the header line: LineFormatError when it is not a header, LogVersionError when it is
 * ours but too new. Older versions are returned for the caller to migrate (none exist yet).
 */
export function parseHeader(text: string, path: string): { version: number } {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw new LineFormatError('the first line is not a log header');
  }
  const { format, version } = (header ?? {}) as { format?: unknown; version?: unknown };
  if (format !== LOG_FORMAT || typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new LineFormatError('the first line is not a marketplace-api-log header');
  }
  if (version > LOG_VERSION) throw new LogVersionError(version, path);
  return { version };
}

/** Parses one envelope line into ops; throws LineFormatError when damaged. */
export function decodeLine(text: string): WriteOp[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LineFormatError('not valid JSON');
  }
  const envelope = parsed as Partial<BatchLine> & Partial<PutLine>;
  if (envelope?.op === 'batch' && Array.isArray(envelope.ops)) return envelope.ops.map(fromLine);
  return [fromLine(parsed)];
}

function fromLine(value: unknown): WriteOp {
  const line = value as { op?: unknown; c?: unknown; id?: unknown; d?: unknown };
  if (typeof line?.c !== 'string' || typeof line.id !== 'string') throw new LineFormatError('envelope without collection or id');
  if (line.op === 'del') return { op: 'del', collection: line.c, id: line.id };
  if (line.op === 'put' && typeof line.d === 'object' && line.d !== null && (line.d as StoredRecord).id === line.id) {
    return { op: 'put', collection: line.c, id: line.id, data: line.d as StoredRecord };
  }
  throw new LineFormatError('envelope with an unknown operation or data');
}
