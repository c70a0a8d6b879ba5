// The user endpoints: your own profile (with email), changing it (not the email of an account
// with two-factor sign-in on: that takes the portal), and anyone's public profile.

import type { Clock } from '../../clock.ts';
import { actingUser } from '../../domain/actor.ts';
import { USERS, userStatus } from '../../domain/records.ts';
import { publicUser } from '../../domain/views.ts';
import { forbidden, notFound } from '../../domain/errors.ts';
import { isSameEmail } from '../../domain/email.ts';
import { TWO_FACTOR } from '../../domain/account-records.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';
import { ownProfileBody, decideOwnProfileChange, readOwnProfileChange } from '../../resources/profile.ts';

export const EMAIL_IN_PORTAL = 'This account signs in with two-factor sign-in: change its email in the developer portal (PUT /portal/v1/me, with your password and a code), not with a key.';

export interface UserRoutesDeps {
  store: Store;
  clock: Clock;
  outbox: EventOutbox;
}

export function userRoutes(deps: UserRoutesDeps): ApiRoute[] {
  const { store, clock, outbox } = deps;

  function me(context: KeyContext): Reply {
    return { status: 200, body: ownProfileBody(context.user) };
  }

  /**
   * Changes only the fields sent, on top of the user as she is when the write commits: a role,
   * name or email the operator set meanwhile is kept unless this PUT itself sends that field.
   */
  async function updateMe(context: KeyContext): Promise<Reply> {
    const fields = readOwnProfileChange(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      // A key alone must not move the sign-in email of an account that signs in with a second
      // factor: the portal asks for the password and a code for that.
      if (fields.email !== undefined && !isSameEmail(fields.email, user.email) && tx.get(TWO_FACTOR, user.id)?.enabled === true) throw forbidden(EMAIL_IN_PORTAL);
      const { ops, result: changed } = decideOwnProfileChange(tx, actingUser(user), { fields, ifMatch: context.req.headers['if-match'], outbox }, clock.now());
      return { ops, result: { status: 200, body: ownProfileBody(changed) } };
    });
  }

  function profile(context: KeyContext): Reply {
    const user = store.get(USERS, context.params.id!);
    // An erased user's record stays (emptied) so ids resolve for the operator; to others it is gone.
    if (!user || userStatus(user) === 'erased') throw notFound('User');
    return { status: 200, body: { data: publicUser(user) } };
  }

  return [
    { method: 'GET', pattern: '/v1/users/me', resource: 'users', summary: 'Your own user, with email and role', handle: me },
    { method: 'PUT', pattern: '/v1/users/me', resource: 'users', summary: 'Change your profile', handle: updateMe },
    { method: 'GET', pattern: '/v1/users/:id', resource: 'users', summary: "A user's public profile", handle: profile },
  ];
}

