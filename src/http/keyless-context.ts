// The context of a request that needs no key and no session: an operator route (/admin, /metrics),
// whose gate (src/pipeline/admin-gate.ts) checked the operator token, or a public one (health, the
// OpenAPI document, the dashboard's files; src/pipeline/public-gate.ts). The operator token is a
// setting, not a record, so there is nobody to read again inside a write: `commit` decides it on
// the records alone. An open portal route's context (open-portal-context.ts) is one of these too.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Decision, Store, Transaction } from '../store/store.ts';
import { BaseContext } from './context.ts';
import type { KeylessContext as KeylessContextShape, Reply } from './route.ts';

export class KeylessContext extends BaseContext implements KeylessContextShape {
  private readonly store: Store;

  constructor(req: IncomingMessage, res: ServerResponse, store: Store) {
    super(req, res);
    this.store = store;
  }

  commit<R = Reply>(decide: (tx: Transaction) => Decision<R>): Promise<R> {
    return this.store.commit(decide);
  }
}
