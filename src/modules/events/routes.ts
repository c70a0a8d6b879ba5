// /v1/events: the caller's own event log (event-log.ts), the same events and
// payloads their webhooks receive, kept EVENT_RETENTION_DAYS: a page of it oldest first
// (`after`, `limit`), or the same as Server-Sent Events that follow it live
// (event-streams.ts). Both need `read:webhooks`; nobody sees another user's events.

import { isExpired } from '../../auth/key-lifetime.ts';
import { permissionSetOf } from '../../auth/permissions.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, HttpError } from '../../domain/errors.ts';
import { KEYS, USERS, userStatus } from '../../domain/records.ts';
import { checkQueryNames, integerParam } from '../../http/lists.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { EventLog } from './event-log.ts';
import type { EventStreams } from './event-streams.ts';

export interface EventRouteDeps {
  store: Store;
  clock: Clock;
  eventLog: EventLog;
  streams: EventStreams;
}

export const DEFAULT_EVENT_PAGE = 50;
export const MAX_EVENT_PAGE = 100;

export function eventRoutes(deps: EventRouteDeps): ApiRoute[] {
  const { store, clock, eventLog, streams } = deps;

  /** The seq after which to read: 0 without `after`; 400 for an id that is not one of the caller's kept events. */
  function cursorOf(ownerId: string, after: string | null, name: string): number {
    if (after === null || after === '') return 0;
    const record = eventLog.find(ownerId, after);
    if (record === undefined) {
      throw badRequest(`${name} "${after.slice(0, 64)}" is not one of your kept events (unknown, another user's, or older than the kept days). Start again without it.`, {
        [name === 'Last-Event-ID' ? 'last_event_id' : 'after']: 'must be the id of one of your kept events',
      });
    }
    return record.seq;
  }

  async function list(context: KeyContext): Promise<Reply> {
    checkQueryNames(context.query, ['after', 'limit']);
    const limit = integerParam(context.query, 'limit', DEFAULT_EVENT_PAGE, 1, MAX_EVENT_PAGE);
    // Many servers: every event acknowledged before this request is settled here first (the caller sees its own).
    await eventLog.settle();
    const afterSeq = cursorOf(context.user.id, context.query.get('after'), 'after');
    // One more than asked tells whether another page follows.
    const records = eventLog.after(context.user.id, afterSeq, limit + 1);
    const page = records.slice(0, limit);
    // The payloads are stored as JSON text: joined as they are, not parsed and serialised again.
    const payloads = page.map((record) => eventLog.payloadOf(record)).filter((payload) => payload !== null);
    const json = `{"data":[${payloads.join(',')}],"has_more":${records.length > limit}}`;
    return { status: 200, bytes: Buffer.from(json), headers: { 'Content-Type': 'application/json; charset=utf-8' } };
  }

  async function stream(context: KeyContext): Promise<Reply> {
    checkQueryNames(context.query, ['after']);
    await eventLog.settle();
    const header = context.req.headers['last-event-id'];
    const lastEventId = typeof header === 'string' && header !== '' ? header : null;
    const afterSeq = lastEventId !== null ? cursorOf(context.user.id, lastEventId, 'Last-Event-ID') : cursorOf(context.user.id, context.query.get('after'), 'after');
    // HEAD (which every GET route answers): the stream's head alone, nothing kept open.
    if (context.method === 'HEAD') return { status: 200, headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store, no-transform' } };
    const keyId = context.key.id;
    const refusal = streams.refusal(keyId);
    if (refusal !== null) throw new HttpError(429, refusal);
    const ownerId = context.user.id;
    const path = context.path;
    /** The key as it is now: not revoked, not expired, still allowed the route, its user active. */
    const allowed = (): boolean => {
      const key = store.get(KEYS, keyId);
      if (key === undefined || key.revoked_at !== null || isExpired(key, clock.now())) return false;
      const user = store.get(USERS, key.user_id);
      if (user === undefined || userStatus(user) !== 'active') return false;
      return permissionSetOf(key.permissions).allows(streamRoute, path);
    };
    return { status: 200, stream: (res, headers) => streams.open(res, headers, { ownerId, keyId, afterSeq, allowed }) };
  }

  const streamRoute: ApiRoute = { method: 'GET', pattern: '/v1/events/stream', resource: 'webhooks', summary: 'Your events as Server-Sent Events, from a past one and then live', handle: stream };
  return [{ method: 'GET', pattern: '/v1/events', resource: 'webhooks', summary: 'Your events, oldest first (the payloads your webhooks receive)', handle: list }, streamRoute];
}
