// The request pipeline. Each request goes to the gate of its area (src/pipeline/areas.ts): /v1
// (v1-gate.ts: key, CPU budget, rate limit, route, permission), /admin and /metrics
// (admin-gate.ts: the operator token, route), a module's own area (the portal's /portal/v1,
// src/modules/portal/gate.ts), and everything else (public-gate.ts: static files, health, the
// OpenAPI document). The gate
// builds its surface's context (src/http/*-context.ts) once, first, and hands it with its steps
// to `run`, the part every area shares: run the steps, send the answer (`respond`), and end in
// `finish`. Errors thrown anywhere become JSON in `sendError` and only there; unknown ones are
// logged with the request id and answered with a bare 500. What is counted of each request
// (usage, metrics, the access log, the CPU its work used) is the request observer's
// (src/pipeline/request-observer.ts): the listener tells it when the request arrived, when each
// piece of its work on the event loop begins and pauses, and the status it ended with.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, instanceBehind, limiterUnavailable, storeUnavailable } from './domain/errors.ts';
import type { BaseContext } from './http/context.ts';
import { errorResponse, sendBytes, sendReply } from './http/respond.ts';
import type { Reply } from './http/route.ts';
import { LimiterUnavailableError } from './limits/rate-limiter.ts';
import { createAdminGate } from './pipeline/admin-gate.ts';
import { areaOf, type CoreArea } from './pipeline/areas.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import type { Gate, Run } from './pipeline/gate.ts';
import { createPublicGate } from './pipeline/public-gate.ts';
import { createV1Gate } from './pipeline/v1-gate.ts';
import { InstanceBehindError, StoreClosedError, StoreUnavailableError } from './store/store.ts';

export function createRequestListener(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { observer } = deps;

  /** Runs an area's steps on its context and answers; the observer is told when its work on the event loop begins and pauses. */
  const run: Run = (context, steps, startedAt) => {
    const began = observer.workBegins();
    let reply: Reply | Promise<Reply>;
    try {
      reply = steps(context);
    } catch (error) {
      finish(context, sendError(context, error), startedAt);
      observer.workPauses(context, began);
      return;
    }
    // Most /v1 answers are ready at once (a cached page, a look-up, a refusal): they are sent
    // in this same turn, with no promise made for them; only handlers that wait are awaited
    // (profiled: a promise per request was a visible share of a cached page's cost).
    if (reply instanceof Promise) {
      observer.workPauses(context, began);
      reply.then(
        (ready) => {
          const resumed = observer.workBegins();
          respond(context, ready, startedAt);
          observer.workPauses(context, resumed);
        },
        (error: unknown) => finish(context, sendError(context, error), startedAt),
      );
    } else {
      respond(context, reply, startedAt);
      observer.workPauses(context, began);
    }
  };

  const gates: Record<CoreArea, Gate> = {
    v1: createV1Gate(deps, run),
    admin: createAdminGate(deps, run),
    public: createPublicGate(deps, run),
  };
  // The modules' own areas (the portal's /portal/v1), each with the gate it built.
  const moduleAreas = deps.moduleAreas;
  const moduleGates = moduleAreas.map((area) => area.makeGate(run));

  function respond(context: BaseContext, reply: Reply, startedAt: number): void {
    let status: number | Promise<number>;
    try {
      status = sendReply(context, reply, observer.poolWorkCharge(context), deps.compression);
    } catch (error) {
      status = sendError(context, error);
    }
    // A large answer being compressed off the main thread is counted once it is sent.
    if (status instanceof Promise) status.then((sent) => finish(context, sent, startedAt), (error: unknown) => finish(context, sendError(context, error), startedAt));
    else finish(context, status, startedAt);
  }
  /** Turns any thrown value into its JSON answer; returns the status sent. */
  function sendError(context: BaseContext, error: unknown): number {
    if (error instanceof StoreUnavailableError || error instanceof StoreClosedError) error = storeUnavailable();
    if (error instanceof LimiterUnavailableError) error = limiterUnavailable();
    if (error instanceof InstanceBehindError) error = instanceBehind(error.message);
    const { status, body, headers: errorHeaders } = errorResponse(error, context.requestId);
    if (status >= 500 && !(error instanceof HttpError)) deps.logError(context.requestId, error);
    if (context.res.headersSent) {
      context.res.destroy();
      return status;
    }
    sendBytes(context.res, status, JSON.stringify(body), Object.assign(context.responseHeaders, errorHeaders));
    return status;
  }

  /** The last step of every request, answered or refused: the observer counts it. */
  function finish(context: BaseContext, status: number, startedAt: number): void {
    observer.finished(context, status, startedAt);
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const area = areaOf(req.url ?? '/', moduleAreas);
    (typeof area === 'number' ? moduleGates[area]! : gates[area])(req, res, observer.arrived());
  };
}
