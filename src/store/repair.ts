// Offline repair of a damaged log (`npm run cli -- repair --data-dir <dir>`, server stopped):
// every good line is kept byte for byte, damaged lines move to a side file beside the log, a
// torn tail is dropped, and the log is replaced crash-safely (temp, fsync, rename, fsync dir).

import { existsSync, linkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { crashSafeWriteFile, writeFileDurably } from './crash-safe-write.ts';
import { nodeFileSystem, type FileSystem } from './files.ts';
import { decodeLine, headerLine, LineFormatError, LOG_FILE_NAME, parseHeader, TEMP_SUFFIX } from './format.ts';
import { readLines } from './lines.ts';
import { acquireDataDirLock } from './lock.ts';
import { oversizedReason, replayLog } from './replay.ts';

export interface DamagedLine {
  /** 1-based line number in the log before repair. */
  line: number;
  byte_offset: number;
  reason: string;
}

/** What the repair did, printed as JSON by the CLI. */
export interface RepairReport {
  log: string;
  /** False when the log needed nothing: it was left untouched. */
  repaired: boolean;
  /** Record lines kept (the header not counted). */
  lines_kept: number;
  lines_moved: number;
  /** The first damaged lines (at most 100), for the operator to inspect. */
  damaged_lines: DamagedLine[];
  /** Where the damaged lines went, one per line as they were (text); null when none. */
  side_file: string | null;
  /** Bytes of an incomplete last line (a write cut off by a crash, never acknowledged), dropped. */
  torn_tail_bytes: number;
  /** The log as it was before the repair (a hard link, no copy); delete it once satisfied. */
  original: string | null;
  summary: string;
}

export interface RepairOptions {
  fileSystem?: FileSystem;
  now?: () => number;
}

const REPORTED_LINES = 100;
const REPAIR_TEMP_NAME = `${LOG_FILE_NAME}.repair${TEMP_SUFFIX}`;

/**
 * Repairs the log in `dataDir`; refuses while a server holds the directory's lock, and refuses
 * a log written by a newer release (LogVersionError) without touching it.
 * @example
 * const report = await repairLog('./data');
 * console.log(report.summary);
 */
export async function repairLog(dataDir: string, options: RepairOptions = {}): Promise<RepairReport> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  const now = options.now ?? Date.now;
  const logPath = join(dataDir, LOG_FILE_NAME);
  if (!existsSync(logPath)) throw new Error(`There is no log at ${logPath}: nothing to repair.`);
  const releaseLock = acquireDataDirLock(dataDir);
  try {
    const scan = scanLog(logPath);
    const report: RepairReport = {
      log: logPath,
      repaired: false,
      lines_kept: scan.kept.length,
      lines_moved: scan.damaged.length,
      damaged_lines: scan.damaged.slice(0, REPORTED_LINES).map(({ line, byte_offset, reason }) => ({ line, byte_offset, reason })),
      side_file: null,
      torn_tail_bytes: scan.tornTailBytes,
      original: null,
      summary: '',
    };
    if (scan.damaged.length === 0 && scan.tornTailBytes === 0 && scan.header !== null) {
      report.summary = `The log ${logPath} is whole (${scan.kept.length} records): nothing to repair, nothing changed.`;
      return report;
    }
    const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
    if (scan.damaged.length > 0) {
      report.side_file = join(dataDir, `${LOG_FILE_NAME}.damaged-${stamp}`);
      await writeFileDurably(fileSystem, report.side_file, linesInChunks(scan.damaged.map((damaged) => damaged.text)));
    }
    report.original = keepOriginal(logPath, join(dataDir, `${LOG_FILE_NAME}.before-repair-${stamp}`));
    // The side file and the original's name must be durable before the log stops holding those lines.
    await fileSystem.syncDirectory(dataDir);

    const header = scan.header ?? headerLine(new Date(now()).toISOString()).slice(0, -1);
    await crashSafeWriteFile(fileSystem, logPath, linesInChunks([header, ...scan.kept]), {
      tempPath: join(dataDir, REPAIR_TEMP_NAME),
      // Prove the result loads before it replaces anything.
      beforeReplace(tempPath) {
        try {
          const discard = { put() {}, remove() {} };
          replayLog(
            tempPath,
            dataDir,
            (message) => {
              throw new Error(message);
            },
            discard,
          );
        } catch (error) {
          throw new Error(`The repaired log did not verify (${(error as Error).message}); the log was left unchanged.`);
        }
      },
    });

    report.repaired = true;
    report.summary = [
      `Repaired ${logPath}: kept ${scan.kept.length} records`,
      scan.damaged.length > 0 ? `moved ${scan.damaged.length} damaged line(s) to ${report.side_file}` : null,
      scan.tornTailBytes > 0 ? `dropped an incomplete last line of ${scan.tornTailBytes} bytes (never acknowledged)` : null,
      scan.header === null ? 'wrote a new header line' : null,
    ]
      .filter((part) => part !== null)
      .join('; ')
      .concat(report.original ? `. The log as it was is kept as ${report.original}; delete it once the server runs well.` : '.');
    return report;
  } finally {
    releaseLock();
  }
}

interface ScannedLine {
  line: number;
  byte_offset: number;
  reason: string;
  text: string;
}

interface LogScan {
  /** The header line as found, or null when it was missing or damaged. */
  header: string | null;
  kept: string[];
  damaged: ScannedLine[];
  tornTailBytes: number;
}

function scanLog(logPath: string): LogScan {
  let header: string | null = null;
  const kept: string[] = [];
  const damaged: ScannedLine[] = [];
  const summary = readLines(logPath, ({ text, lineNumber, offset }) => {
    if (lineNumber === 1) {
      try {
        parseHeader(text, logPath);
        header = text;
        return;
      } catch (error) {
        // A newer release's log is not damaged: leave it to that release.
        if (!(error instanceof LineFormatError)) throw error;
      }
    }
    try {
      decodeLine(text);
      kept.push(text);
    } catch (error) {
      if (!(error instanceof LineFormatError)) throw error;
      const reason = lineNumber === 1 ? 'not a log header' : error.message;
      damaged.push({ line: lineNumber, byte_offset: offset, reason, text });
    }
  }, {
    // Too long to hold as a string: the side file names it, and the original log keeps its bytes.
    oversized: ({ lineNumber, offset, bytes }) => {
      const text = `(line ${lineNumber}, ${bytes} bytes from byte offset ${offset}: too long to copy here; it is in the log kept as it was before the repair)`;
      damaged.push({ line: lineNumber, byte_offset: offset, reason: oversizedReason(bytes), text });
    },
  });
  if (header === null && kept.length === 0 && summary.fileSize > 0) {
    throw new Error(`${logPath} does not look like a marketplace-api log (no header and no readable record); nothing was changed.`);
  }
  return { header, kept, damaged, tornTailBytes: summary.fileSize - summary.completeLength };
}

/** A new file (mode 0600) holding `lines`, fsynced before this returns. */
/** Lines, each ended by a newline, joined 4,096 at a time (a write per line would be slow). */
function* linesInChunks(lines: readonly string[]): Generator<string> {
  for (let start = 0; start < lines.length; start += 4096) yield lines.slice(start, start + 4096).join('\n') + '\n';
}

/** A second name for the log before repair; null where hard links are not possible. */
function keepOriginal(logPath: string, originalPath: string): string | null {
  try {
    linkSync(logPath, originalPath);
    return statSync(originalPath).isFile() ? originalPath : null;
  } catch {
    return null;
  }
}
