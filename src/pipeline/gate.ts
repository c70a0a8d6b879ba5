// What a gate is. The listener (src/server.ts) sends each request to the gate of its area
// (areas.ts); the gate builds the one context its surface uses (the choice of context is made
// there, once) and hands it with the area's steps to `run`, the listener's common end: run the
// steps, send the answer or turn what they threw into JSON, count the request.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BaseContext } from '../http/context.ts';
import type { Reply } from '../http/route.ts';

/**
 * An area's checks in order, then its handler: throws (synchronously) for refusals; answers
 * with a Reply, or a promise of one when the handler waits.
 */
export type Steps<C extends BaseContext> = (context: C) => Reply | Promise<Reply>;

/** The listener's common part, the same for every area (src/server.ts). */
export type Run = <C extends BaseContext>(context: C, steps: Steps<C>) => void;

/** One area's way in: `startedAt` is the arrival's monotonic time (0 when nothing times it). */
export type Gate = (req: IncomingMessage, res: ServerResponse, startedAt: number) => void;
