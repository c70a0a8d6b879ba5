// A user's own sessions: GET /portal/v1/sessions lists them (created, last seen, address, user
// agent, which is this one), DELETE /portal/v1/sessions/:id signs one device out, and DELETE
// /portal/v1/sessions signs out every other. Only one's own: another user's id is a 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOrigin, signedInUser, signIn } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

interface SessionView {
  id: string;
  created_at: string;
  last_seen_at: string;
  client_address: string | null;
  user_agent: string | null;
  current: boolean;
}

test('GET /portal/v1/sessions → each session with created_at, last_seen_at, client_address, user_agent and current', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const phone = await server.request('POST', '/portal/v1/session', { headers: { ...sameOrigin(server), 'user-agent': 'Phone/1.0' }, body: { email: ada.email, password: ada.password } });
  assert.equal(phone.status, 201);

  const listed = await server.request('GET', '/portal/v1/sessions', { headers: ada.headers });
  assert.equal(listed.status, 200, listed.text);
  const sessions = listed.body.data as SessionView[];
  assert.equal(sessions.length, 2);
  for (const session of sessions) {
    assert.deepEqual(Object.keys(session).sort(), ['client_address', 'created_at', 'current', 'id', 'last_seen_at', 'user_agent']);
    assert.equal(session.client_address, '127.0.0.1');
  }
  assert.equal(sessions.filter((session) => session.current).length, 1);
  assert.equal(sessions.find((session) => !session.current)!.user_agent, 'Phone/1.0');
  // The id is no secret: it is not the cookie's value nor the store's digest of it.
  assert.ok(!ada.cookie.includes(sessions[0]!.id));
});

test('DELETE /portal/v1/sessions/:id signs that device out; another user’s session id is a 404; DELETE /portal/v1/sessions ends all but this one', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const grace = await signedInUser(server);
  const laptop = await signIn(server, ada.email, ada.password);
  const tablet = await signIn(server, ada.email, ada.password);

  const sessionsOf = async (headers: Record<string, string>) => (await server.request('GET', '/portal/v1/sessions', { headers })).body.data as SessionView[];
  const laptopId = (await sessionsOf(laptop.headers)).find((session) => session.current)!.id;
  const graceId = (await sessionsOf(grace.headers)).find((session) => session.current)!.id;

  const notHers = await server.request('DELETE', `/portal/v1/sessions/${graceId}`, { headers: ada.headers });
  assert.equal(notHers.status, 404, notHers.text);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: grace.headers })).status, 200, 'Grace still signed in');
  assert.equal((await server.request('DELETE', '/portal/v1/sessions/ses_unknown', { headers: ada.headers })).status, 404);

  const ended = await server.request('DELETE', `/portal/v1/sessions/${laptopId}`, { headers: ada.headers });
  assert.equal(ended.status, 204, ended.text);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: laptop.headers })).status, 401, 'the laptop is signed out');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: tablet.headers })).status, 200);
  assert.equal((await server.request('DELETE', `/portal/v1/sessions/${laptopId}`, { headers: ada.headers })).status, 404, 'already ended');

  const others = await server.request('DELETE', '/portal/v1/sessions', { headers: ada.headers });
  assert.equal(others.status, 200, others.text);
  assert.equal(others.body.data.ended, 1);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: tablet.headers })).status, 401);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, 'this session stays');
  assert.equal((await sessionsOf(ada.headers)).length, 1);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: grace.headers })).status, 200, 'nobody else’s sessions end');
  assert.equal((await server.request('DELETE', '/portal/v1/sessions', { headers: { cookie: ada.cookie } })).status, 403, 'a write from another origin');
  assert.equal((await server.request('GET', '/portal/v1/sessions')).status, 401);
});
