// Session lifetimes on a manual clock: 24 hours without use ends a session (idle), 7 days after
// sign-in ends it whatever the use (absolute); use is written down at most every 5 minutes, not
// on every request; the sweep deletes ended sessions so they do not pile up.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { SESSIONS } from '../../src/domain/account-records.ts';
import { PortalSessions } from '../../src/modules/portal/sessions.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, signIn } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

test('idle: a session unused for 24 h ends; one used within 24 h lives on', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  clock.advance(23 * HOUR);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, 'used after 23 h');
  await useRecorded(server, ada.userId, clock.now());
  clock.advance(23 * HOUR);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, 'the use 23 h ago counted');
  clock.advance(24 * HOUR);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, '24 h without use');
});

test('absolute: 7 days after sign-in the session ends, however often it was used', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  for (let hours = 0; hours < 7 * 24 - 12; hours += 12) {
    clock.advance(12 * HOUR);
    assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, `after ${hours + 12} h`);
    await useRecorded(server, ada.userId, clock.now());
  }
  clock.advance(12 * HOUR);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, '7 days after sign-in');
});

test('reading pages writes nothing: use is recorded once per 5 minutes at most', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const writesBefore = server.app.store.stats().writes;
  for (let index = 0; index < 20; index += 1) assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200);
  assert.equal(server.app.store.stats().writes, writesBefore, '20 reads within 5 minutes: no write');
  clock.advance(5 * MINUTE);
  for (let index = 0; index < 5; index += 1) await server.request('GET', '/portal/v1/me', { headers: ada.headers });
  await waitFor(() => server.app.store.stats().writes === writesBefore + 1);
  const session = [...server.app.store.values(SESSIONS)].find((record) => record.user_id === ada.userId)!;
  assert.equal(Date.parse(session.last_seen_at), clock.now(), 'last_seen_at moved to the use');
});

test('the sweep deletes sessions past their idle or absolute end and keeps live ones', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  clock.advance(12 * HOUR);
  const fresh = await signIn(server, ada.email, ada.password);
  clock.advance(13 * HOUR); // the first is 25 h idle, the second 13 h
  const sessions = new PortalSessions({ store: server.app.store, clock, origin: { publicOrigin: null }, warn: () => {} });
  assert.equal(await sessions.sweepExpired(), 1);
  const left = [...server.app.store.values(SESSIONS)].filter((record) => record.user_id === ada.userId);
  assert.equal(left.length, 1);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: fresh.headers })).status, 200);
});

/** Use is written after the answer (it never delays one): waits until the user's session shows this use. */
function useRecorded(server: TestServer, userId: string, at: number): Promise<number> {
  const lastSeen = () => [...server.app.store.values(SESSIONS)].find((record) => record.user_id === userId)?.last_seen_at;
  return eventually(async () => lastSeen() !== undefined && Date.parse(lastSeen()!) === at, 2_000, 'the use is written');
}

function waitFor(condition: () => boolean): Promise<number> {
  return eventually(async () => condition(), 2_000, 'the use is written');
}
