// Two-factor that holds (contract section 23): a reset or invitation link on an account with
// two-factor sign-in on earns a ticket, not a session; wrong codes also count over 24 hours and
// lock the second factor after 30, until a recovery code or the operator's reset; every sign-in,
// failed sign-in and wrong code is in the owner's activity with address and user agent; and a
// key cannot move the sign-in email of such an account.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { cookieFrom, sameOrigin, signedInUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { codeAt, enrolTwoFactor, passwordStep } from '../helpers/two-factor.ts';

const STEP_MS = 30_000;
const AGENT = 'Firefox/140 (two-factor test)';

async function enrolledUser(t: TestContext) {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  return { clock, server, ada, factor: await enrolTwoFactor(server, ada, clock.now()) };
}

function secondFactor(server: TestServer, body: Record<string, unknown>) {
  return server.request('POST', '/portal/v1/session/second-factor', { headers: { ...sameOrigin(server), 'user-agent': AGENT }, body });
}

/** A code that is none of the ones accepted around `atMs`. */
function wrongCodeAt(secret: string, atMs: number): string {
  const near = new Set([-1, 0, 1].map((step) => codeAt(secret, atMs + step * STEP_MS)));
  for (let n = 0; ; n += 1) {
    const candidate = String(n).padStart(6, '0');
    if (!near.has(candidate)) return candidate;
  }
}

async function activityOf(server: TestServer, headers: Record<string, string>) {
  const answer = await server.request('GET', '/portal/v1/activity', { headers });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.data as Array<{ at: string; action: string; client_address: string | null; user_agent: string | null }>;
}

test('POST /portal/v1/password {invitation} on a two-factor account → 202 with a ticket, no cookie; the ticket and a code sign in', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const invitation = await server.admin('POST', `/admin/v1/users/${ada.userId}/invitations`);
  assert.equal(invitation.status, 201, invitation.text);
  const newPassword = 'a brand new passphrase for ada';
  const answer = await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: invitation.body.data.token, password: newPassword } });
  assert.equal(answer.status, 202, answer.text);
  assert.equal(cookieFrom(answer), null, 'no session before the code');
  assert.equal(answer.body.data.second_factor, 'totp');
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, 'the old session ended with the reset');

  clock.advance(STEP_MS);
  const done = await secondFactor(server, { ticket: answer.body.data.ticket, code: codeAt(factor.secret, clock.now()) });
  assert.equal(done.status, 201, done.text);
  // The password was set: signing in with it asks for a code.
  await passwordStep(server, ada.email, newPassword);
});

