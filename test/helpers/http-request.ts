// One HTTP request as the tests' servers see it from `fetch`: the same default headers (accept,
// accept-language, user-agent `node`, accept-encoding gzip and deflate), a gzip, deflate or br body
// decoded, the answer's headers as a `Headers`. Built on node:http rather than fetch because
// fetch's machinery (undici, web streams) was the largest share of the quick suite's CPU time
// after the servers' own work.

import { Agent, request } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

export interface PlainResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** What fetch sends unless told otherwise (Node 20's undici), so servers log and answer the same. */
const FETCH_DEFAULT_HEADERS: Readonly<Record<string, string>> = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};

/**
 * Sends one request over `agent` (keep-alive, like fetch's pool) and reads the whole answer.
 * A kept-alive connection the server closes for idleness just as a request goes out on it
 * fails with ECONNRESET before any answer (nothing was read): that request is sent once more on
 * a fresh connection, as Node's documentation advises for `request.reusedSocket`.
 */
export async function httpRequest(agent: Agent, url: string, method: string, headers: Record<string, string>, body?: string | Buffer): Promise<PlainResponse> {
  const sent: Record<string, string> = { ...FETCH_DEFAULT_HEADERS };
  for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = value;
  if (body !== undefined) sent['content-length'] = String(Buffer.byteLength(body));
  try {
    return await sendOnce(agent, url, method, sent, body);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return sendOnce(agent, url, method, sent, body);
  }
}

/** A kept-alive connection was closed by the server before this request's answer began. */
class StaleConnectionError extends Error {}

function sendOnce(agent: Agent, url: string, method: string, sent: Record<string, string>, body?: string | Buffer): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(url, { method, headers: sent, agent }, (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const answerHeaders = new Headers();
        const raw = incoming.rawHeaders;
        for (let index = 0; index < raw.length; index += 2) answerHeaders.append(raw[index]!, raw[index + 1]!);
        try {
          const bytes = decoded(Buffer.concat(chunks), answerHeaders.get('content-encoding'));
          resolve({ status: incoming.statusCode ?? 0, headers: answerHeaders, text: bytes.toString('utf8') });
        } catch (error) {
          reject(error);
        }
      });
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const stale = outgoing.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      reject(stale ? new StaleConnectionError(error.message) : error);
    });
    outgoing.end(body);
  });
}

/** The body as fetch hands it over: decoded when the answer says it is compressed. */
function decoded(bytes: Buffer, encoding: string | null): Buffer {
  if (bytes.length === 0 || encoding === null) return bytes;
  switch (encoding.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(bytes);
    case 'deflate':
      return inflateSync(bytes);
    case 'br':
      return brotliDecompressSync(bytes);
    default:
      return bytes;
  }
}
