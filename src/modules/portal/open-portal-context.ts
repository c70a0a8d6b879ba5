// The context of a /portal/v1 route served without a session (sign-in, sign-up, a password set
// from an invitation, the portal's settings), made by the portal gate (src/pipeline/portal-gate.ts).
// It is a keyless context (its `commit` decides a write on the records alone: nobody signed in
// is read again) that also carries the live session the request came with, if any, for the
// routes that start or end one.

import { KeylessContext } from '../../http/keyless-context.ts';
import type { OpenPortalContext as OpenPortalContextShape, SignedIn } from '../../http/route.ts';

export class OpenPortalContext extends KeylessContext implements OpenPortalContextShape {
  /** The live session the cookie names, if any; recorded by the gate before the handler runs. */
  signedIn: SignedIn | null = null;
}
