// The user endpoints: your own profile (with email), changing it, and anyone's public profile.

import type { Clock } from '../../clock.ts';
import { actingUser } from '../../domain/actor.ts';
import { USERS, userStatus } from '../../domain/records.ts';
import { publicUser } from '../../domain/views.ts';
import { notFound } from '../../domain/errors.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';
import { ownProfileBody, decideOwnProfileChange, readOwnProfileChange } from '../../resources/profile.ts';

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

