// A Server-Sent Events reader for the tests of GET /v1/events/stream: a real HTTP request on its
// own connection, whose frames (`id:`, `event:`, `data:`, comments) are parsed as the bytes arrive.

import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { TestContext } from 'node:test';
import type { TestServer } from '../helpers/server.ts';

export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A stream being read as its bytes arrive: complete frames so far, and whether it ended. */
export class StreamReader {
  readonly frames: Frame[] = [];
  ended = false;
  private buffer = '';
  readonly response: IncomingMessage;

  constructor(response: IncomingMessage) {
    this.response = response;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) frame.comment = line.slice(1).trim();
          else {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon) as 'id' | 'event' | 'data';
            frame[field] = line.slice(colon + 1).replace(/^ /, '');
          }
        }
        this.frames.push(frame);
      }
    });
    response.on('close', () => (this.ended = true));
    response.on('end', () => (this.ended = true));
  }

  /** The events received so far (comments left out). */
  events(): Frame[] {
    return this.frames.filter((frame) => frame.id !== undefined);
  }

  ids(): string[] {
    return this.events().map((frame) => frame.id!);
  }

  close(): void {
    this.response.destroy();
  }
}

/** Opens GET /v1/events/stream (its own connection); resolves once the head arrived. */
export function openStream(t: TestContext, server: TestServer, key: string, headers: Record<string, string> = {}, path = '/v1/events/stream'): Promise<{ status: number; contentType: string; reader: StreamReader; text: () => Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(server.url + path, { method: 'GET', agent: false, headers: { authorization: `Bearer ${key}`, ...headers } }, (response) => {
      const reader = new StreamReader(response);
      t.after(() => reader.close());
      const text = () =>
        new Promise<string>((done) => {
          if (reader.ended) return done(reader.frames.map((frame) => JSON.stringify(frame)).join('\n'));
          let body = '';
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => done(body));
        });
      resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), reader, text });
    });
    req.on('error', reject);
    req.end();
  });
}
