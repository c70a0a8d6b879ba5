// The operator's gate: /admin (and /metrics). Its steps, in order:
//   0. the URL (U+0000); for /admin, the instance caught up with every acknowledged write (or 503)
//   1. the operator token (401, or 429 once the address has failed too often: the same count
//      as /v1's keys, so guessing either one costs the same)
//   2. route (404/405)
//   3. the handler.
// Each request gets a KeylessContext: the token is a setting, not a record to read again.

import { OperatorTokenCheck, operatorTokenRequired } from '../auth/operator-token.ts';
import { KeylessContext } from '../http/keyless-context.ts';
import type { Reply } from '../http/route.ts';
import type { PipelineDeps } from './deps.ts';
import { refuseFailedAuthentication } from './failed-authentication.ts';
import { checkUrl, whenFresh } from './first-checks.ts';
import type { Gate, Run } from './gate.ts';
import { labelAskedRoute, matchRoute } from './route-step.ts';

type AdminDeps = Pick<PipelineDeps, 'store' | 'operatorToken' | 'adminRoutes' | 'failedAuthLimiter' | 'failedAuthLimit' | 'clientAddress'>;

export function createAdminGate(deps: AdminDeps, run: Run): Gate {
  const operatorToken = new OperatorTokenCheck(deps.operatorToken);

  function steps(context: KeylessContext): Reply | Promise<Reply> {
    checkUrl(context);
    // /metrics answers from counters, not records: an instance behind may still be scraped.
    if (context.path === '/metrics') return afterFreshness(context);
    return whenFresh(deps.store, () => afterFreshness(context));
  }

  function afterFreshness(context: KeylessContext): Reply | Promise<Reply> {
    if (!operatorToken.matches(context.req.headers.authorization)) {
      labelAskedRoute(deps.adminRoutes, context);
      return refuseFailedAuthentication(deps, context, operatorTokenRequired);
    }
    return matchRoute(deps.adminRoutes, context).handle(context);
  }

  return (req, res, startedAt) => run(new KeylessContext(req, res, deps.store), steps, startedAt);
}
