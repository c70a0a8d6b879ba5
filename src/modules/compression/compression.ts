// Compressed representations of an answer's bytes. Answers of 1 KiB or more in a textual type
// are sent br- or gzip-encoded when the client accepts it. Each representation has its own
// ETag (the identity tag with the coding appended, src/http/conditional.ts `encodedEtag`), so
// If-None-Match works per encoding.
//
// Compressed bytes are remembered per identity Buffer object (a WeakMap): a handler that keeps
// its answer's bytes (a cached list page, the OpenAPI document, a dashboard file) returns the
// same Buffer each time, so that answer is compressed once and never again while it lives; a
// fresh answer's Buffer is collected with everything made from it. The copy kept is sized to
// its bytes (kept-bytes.ts), not a slice of zlib's output buffer.
//
// Only small answers are compressed on the main thread (a few hundred microseconds). A larger
// one is compressed by zlib's asynchronous API in libuv's thread pool, so one client asking for
// big uncached pages cannot stall everyone else: a 2 MB page of text brotli cannot shrink held
// the event loop 150-400 ms when compressed in place. At most two such jobs run at once, so the
// pool keeps threads for the file log's writes and fsyncs, and the largest answers get a lower
// brotli quality, which costs a tenth of the time on text that hardly compresses. The time a
// pool thread spends is told to the request that asked for it, for its key's CPU budget.
// A pool job's output comes back in chunks, each one a callback on the event loop: with zlib's
// 16 KiB default a 1 MiB page was 64 of them, and on a busy machine each one can be held up, so
// the main thread spent tens of milliseconds per page on it; a chunk the size of the answer (up
// to 1 MiB) makes it one to a few.

import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync, type BrotliOptions } from 'node:zlib';
import { keptCopy } from '../../http/kept-bytes.ts';
import type { Encoding } from './negotiation.ts';

export const MIN_COMPRESSED_BYTES = 1024;
/** Larger answers (only an operator's backup gets there) are sent plain rather than hold a pool thread for seconds. */
export const MAX_COMPRESSED_BYTES = 8 * 1024 * 1024;

const COMPRESSIBLE_TYPE = /^(application\/(json|x-ndjson|javascript)|text\/|image\/svg\+xml)/;
/** Answers up to this size are compressed in place: about 2 ms of brotli at worst. */
export const MAX_SYNC_COMPRESSED_BYTES = 32 * 1024;
/** From this size on brotli runs at quality 4: on text that hardly compresses, 10x faster than 5. */
const LARGE_ANSWER_BYTES = 256 * 1024;
/** Compressions running in the thread pool at once (libuv has 4 threads; the log needs some). */
const MAX_BACKGROUND_JOBS = 2;
/** The largest output chunk of a pool job (zlib's default is 16 KiB). */
const MAX_POOL_CHUNK_BYTES = 1024 * 1024;

/** Brotli's default (11) is far slower than gzip; 5 still beats gzip on size at a similar cost. */
const BROTLI_OPTIONS: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };
const LARGE_BROTLI_OPTIONS: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

const compressedCopies = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>();
/** Compressions under way, so that clients asking for the same answer at once share one. */
const inFlight = new WeakMap<Buffer, Partial<Record<Encoding, Promise<Buffer>>>>();
let backgroundJobs = 0;
const waitingJobs: Array<() => void> = [];

/** True when an answer of this size and Content-Type (undefined = our JSON) is worth compressing. */
export function isCompressible(bytes: Buffer, contentType: string | number | undefined): boolean {
  if (bytes.length < MIN_COMPRESSED_BYTES || bytes.length > MAX_COMPRESSED_BYTES) return false;
  return contentType === undefined || COMPRESSIBLE_TYPE.test(String(contentType));
}

/**
 * `bytes` encoded with `encoding`, made once per Buffer object (answers' bytes are never changed
 * in place): at once when kept or small, else a promise of the copy compressed off the main
 * thread, whose time in the pool is told to `onPoolWork` (not when another request's job is shared).
 */
export function compressed(bytes: Buffer, encoding: Encoding, onPoolWork: ((ms: number) => void) | null = null): Buffer | Promise<Buffer> {
  let copies = compressedCopies.get(bytes);
  if (copies === undefined) {
    copies = {};
    compressedCopies.set(bytes, copies);
  }
  const kept = copies[encoding];
  if (kept !== undefined) return kept;
  if (bytes.length <= MAX_SYNC_COMPRESSED_BYTES) {
    return (copies[encoding] = keptCopy([encoding === 'br' ? brotliCompressSync(bytes, BROTLI_OPTIONS) : gzipSync(bytes)]));
  }
  let running = inFlight.get(bytes);
  if (running === undefined) {
    running = {};
    inFlight.set(bytes, running);
  }
  const jobs = running;
  return (jobs[encoding] ??= compressInPool(bytes, encoding, onPoolWork).then(
    (result) => {
      delete jobs[encoding];
      return (copies[encoding] = keptCopy([result]));
    },
    (error: Error) => {
      delete jobs[encoding];
      throw error;
    },
  ));
}

/** One compression in libuv's thread pool, waiting its turn behind MAX_BACKGROUND_JOBS others. */
async function compressInPool(bytes: Buffer, encoding: Encoding, onPoolWork: ((ms: number) => void) | null): Promise<Buffer> {
  if (backgroundJobs >= MAX_BACKGROUND_JOBS) await new Promise<void>((resolve) => waitingJobs.push(resolve));
  backgroundJobs += 1;
  // From its turn to its result: a pool thread busy with this job alone.
  const began = performance.now();
  try {
    // Output about the input's size at most (text that does not compress), in one chunk or a few.
    const chunkSize = Math.min(MAX_POOL_CHUNK_BYTES, bytes.length + 1024);
    return await new Promise<Buffer>((resolve, reject) => {
      const done = (error: Error | null, result: Buffer): void => (error ? reject(error) : resolve(result));
      if (encoding === 'br') {
        const quality = bytes.length >= LARGE_ANSWER_BYTES ? LARGE_BROTLI_OPTIONS : BROTLI_OPTIONS;
        brotliCompress(bytes, { ...quality, chunkSize, params: { ...quality.params, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }, done);
      } else gzip(bytes, { chunkSize }, done);
    });
  } finally {
    onPoolWork?.(performance.now() - began);
    backgroundJobs -= 1;
    waitingJobs.shift()?.();
  }
}
