// The gate of everything else, open to anyone. Its steps, in order:
//   0. the URL (U+0000)
//   1. a static file (the dashboard's and the portal's pages) for GET or HEAD, when the path is one
//   2. route (404/405) among the public routes (health, readiness, the OpenAPI document)
//   3. the handler.
// Each request gets a KeylessContext.

import { KeylessContext } from '../http/keyless-context.ts';
import type { Reply } from '../http/route.ts';
import type { PipelineDeps } from './deps.ts';
import { checkUrl } from './first-checks.ts';
import type { Gate, Run } from './gate.ts';
import { matchRoute } from './route-step.ts';

type PublicDeps = Pick<PipelineDeps, 'store' | 'publicRoutes' | 'staticAsset'>;

export function createPublicGate(deps: PublicDeps, run: Run): Gate {
  function steps(context: KeylessContext): Reply | Promise<Reply> {
    checkUrl(context);
    const asset = (context.method === 'GET' || context.method === 'HEAD') && deps.staticAsset ? deps.staticAsset(context.path) : null;
    if (asset) {
      context.routeLabel = context.path.startsWith('/portal') ? 'GET /portal' : 'GET /dashboard';
      return { status: asset.status, bytes: asset.body, headers: asset.headers };
    }
    return matchRoute(deps.publicRoutes, context).handle(context);
  }

  return (req, res, startedAt) => run(new KeylessContext(req, res, deps.store), steps, startedAt);
}
