// The user endpoints: your own profile (with email), changing it, and anyone's public profile.

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { USERS, userStatus, type UserRecord } from '../domain/records.ts';
import { privateUser, publicUser } from '../domain/views.ts';
import { assertIfMatch, etagOf } from '../http/conditional.ts';
import { notFound } from '../domain/errors.ts';
import type { ApiRoute, KeyContext, Reply } from '../http/route.ts';
import { BodyChecker, requireNonEmpty } from '../http/validation.ts';
import type { Store } from '../store/store.ts';
import type { EventOutbox } from '../domain/events.ts';
import { assertEmailFree, readProfileFields } from './profile.ts';

export interface UserRoutesDeps {
  store: Store;
  clock: Clock;
  outbox: EventOutbox;
}

const EDITABLE_FIELDS = ['name', 'bio', 'website', 'avatar_url', 'email'] as const;
const READ_ONLY_FIELDS = ['id', 'role', 'created_at', 'updated_at'];

export function userRoutes(deps: UserRoutesDeps): ApiRoute[] {
  const { store, clock, outbox } = deps;

  function me(context: KeyContext): Reply {
    return { status: 200, body: meBody(context.user) };
  }

  /**
   * Changes only the fields sent, on top of the user as she is when the write commits: a role,
   * name or email the operator set meanwhile is kept unless this PUT itself sends that field.
   */
  async function updateMe(context: KeyContext): Promise<Reply> {
    const body = await context.readJsonBody();
    const checker = new BodyChecker(body, EDITABLE_FIELDS, READ_ONLY_FIELDS);
    const fields = readProfileFields(checker);
    checker.finish();
    requireNonEmpty(body, EDITABLE_FIELDS);
    return context.commit((tx, { user }) => {
      assertIfMatch(context.req.headers['if-match'], () => etagOf(Buffer.from(JSON.stringify(meBody(user)))));
      if (fields.email) assertEmailFree(tx, fields.email, user.id);
      const changed: UserRecord = { ...user, ...fields, updated_at: isoTime(clock.now()) };
      return {
        ops: [{ op: 'put', collection: USERS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'user.updated', changed.id, privateUser(changed))],
        reply: { status: 200, body: meBody(changed) },
      };
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

/** GET /v1/users/me's body; its ETag is what If-Match on PUT /v1/users/me is compared with. */
function meBody(user: UserRecord): { data: ReturnType<typeof privateUser> } {
  return { data: privateUser(user) };
}
