// What a route is, and what its handler receives. Each /v1 route declares its method, pattern
// and resource once; the permission check and the OpenAPI test both derive from that.

import type { IncomingMessage } from 'node:http';
import type { KeyRecord, UserRecord } from '../domain/records.ts';
import type { WriteOp } from '../store/format.ts';

export const RESOURCES = ['listings', 'users', 'analytics', 'webhooks'] as const;
export type Resource = (typeof RESOURCES)[number];

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A handler's answer. `body` is serialised as JSON; `bytes` are sent as they are. */
export interface Reply {
  status: number;
  body?: unknown;
  bytes?: Buffer;
  etag?: string;
  headers?: Record<string, string>;
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The raw query string, without the "?" ("" when there is none); `query` is its parsed form. */
  readonly search: string;
  readonly requestId: string;
  /** The parsed JSON object body (POST/PUT/PATCH); 400/413/415 on bad input. */
  readJsonBody(): Promise<Record<string, unknown>>;
  /**
   * Makes `ops` durable and answers `reply`. The server may add ops of its own to the same
   * atomic write (the idempotency record of a POST), so every write goes through here.
   */
  commit(ops: WriteOp[], reply: Reply): Promise<Reply>;
}

export interface KeyContext extends RequestContext {
  readonly key: KeyRecord;
  readonly user: UserRecord;
}

export interface ApiRoute {
  method: Method;
  pattern: string;
  resource: Resource;
  summary: string;
  handle(context: KeyContext): Promise<Reply> | Reply;
}

export interface OpenRoute {
  method: Method;
  pattern: string;
  summary: string;
  handle(context: RequestContext): Promise<Reply> | Reply;
}
