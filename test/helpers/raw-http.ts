// One HTTP request through node:http, for tests that must see the bytes on the wire: fetch
// decompresses bodies and hides some headers, this does neither.

import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body exactly as sent (still compressed when Content-Encoding says so). */
  body: Buffer;
}

export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, baseUrl), { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
