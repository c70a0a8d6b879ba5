// Captures real answers of the server under test (status, raw headers in order, body bytes) for
// the same-bytes and group-commit baselines (bench/baseline-same-bytes.ts,
// bench/baseline-group-commit.ts) to replay.

import { request } from 'node:http';

export interface CapturedAnswer {
  path: string;
  status: number;
  /** Header names and values alternating, as res.rawHeaders gives them and writeHead takes them. */
  headers: string[];
  /** Base64 of the body bytes. */
  body: string;
}

/** The cached page, an uncached page and a lookup by id. */
export interface CapturedAnswers {
  list: CapturedAnswer;
  page: CapturedAnswer;
  item: CapturedAnswer;
}

/** Node's server writes these itself (Date per second, the keep-alive pair from its own settings). */
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** A GET by default; with `post`, a POST of that JSON text. */
export function captureAnswer(baseUrl: string, path: string, headers: Record<string, string>, post?: string): Promise<CapturedAnswer> {
  return new Promise((resolve, reject) => {
    const method = post === undefined ? 'GET' : 'POST';
    const sent = post === undefined ? headers : { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(post)) };
    const outgoing = request(`${baseUrl}${path}`, { method, headers: sent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const flat: string[] = [];
        for (let index = 0; index < res.rawHeaders.length; index += 2) {
          if (!ADDED_BY_NODE.has(res.rawHeaders[index]!.toLowerCase())) flat.push(res.rawHeaders[index]!, res.rawHeaders[index + 1]!);
        }
        resolve({ path, status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks).toString('base64') });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(post);
  });
}
