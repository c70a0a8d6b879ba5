// What a gate is. The listener (src/server.ts) sends each request to the gate of its area
// (areas.ts); the gate builds the one context its surface uses (the choice of context is made
// there, once) and hands it with the area's steps to `run`, the listener's common end: run the
// steps, send the answer or turn what they threw into JSON, count the request (the arrival time
// the gate was given goes with it, for the request observer).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BaseContext } from '../http/context.ts';
import type { Reply } from '../http/route.ts';

/**
 * An area's checks in order, then its handler: throws (synchronously) for refusals; answers
 * with a Reply, or a promise of one when the handler waits.
 */
export type Steps<C extends BaseContext> = (context: C) => Reply | Promise<Reply>;

/** The listener's common part, the same for every area (src/server.ts); `startedAt` is the one the gate was given. */
export type Run = <C extends BaseContext>(context: C, steps: Steps<C>, startedAt: number) => void;

/** One area's way in: `startedAt` is the arrival's time from the request observer (src/pipeline/request-observer.ts `arrived`). */
export type Gate = (req: IncomingMessage, res: ServerResponse, startedAt: number) => void;
