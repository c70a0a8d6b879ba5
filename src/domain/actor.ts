// Who a write is decided for. Every rule of src/resources/ is called as
// `decideX(tx, actor, input, now)`: the write's Transaction, the actor, an object with the rest
// (ids, fields, secrets, the outbox…) and the time in milliseconds. A user acting (through /v1 or
// the portal) is her record as it is inside the write; the operator (the /admin/v1 token) is a
// setting, not a record, so it carries nothing; nor does a visitor, someone not signed in (an open
// portal sign-up). A rule takes the narrowest actor it serves: `UserActor` for a user's own
// writes, `OperatorActor` for the operator's, a union when several may.

import type { UserRecord } from './records.ts';

/** A user acting on her own records, as she is when the write is decided. */
export interface UserActor {
  readonly kind: 'user';
  readonly user: UserRecord;
}

/** The operator, who holds the operator token. */
export interface OperatorActor {
  readonly kind: 'operator';
}

/** Someone not signed in: an open portal route (sign-up). */
export interface VisitorActor {
  readonly kind: 'visitor';
}

export type Actor = UserActor | OperatorActor | VisitorActor;

/** The operator as an actor (there is one). */
export const OPERATOR: OperatorActor = Object.freeze({ kind: 'operator' });

/** A visitor as an actor (nobody in particular). */
export const VISITOR: VisitorActor = Object.freeze({ kind: 'visitor' });

/** `user` as an actor. */
export function actingUser(user: UserRecord): UserActor {
  return { kind: 'user', user };
}
