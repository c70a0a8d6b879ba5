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

test('30 wrong codes in 24 h lock the second factor (423) until a recovery code; the owner sees it in the activity', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  let wrong = 0;
  // 10 wrong codes per 15 minutes is the short limit; 3 rounds of 10 stay under it.
  for (let round = 0; round < 3; round += 1) {
    for (let i = 0; i < 10; i += 1) {
      const ticket = await passwordStep(server, ada.email, ada.password);
      const answer = await secondFactor(server, { ticket, code: wrongCodeAt(factor.secret, clock.now()) });
      assert.equal(answer.status, 401, answer.text);
      wrong += 1;
    }
    clock.advance(16 * 60 * 1000);
  }
  assert.equal(wrong, 30);
  clock.advance(STEP_MS);
  const ticket = await passwordStep(server, ada.email, ada.password);
  const locked = await secondFactor(server, { ticket, code: codeAt(factor.secret, clock.now()) });
  assert.equal(locked.status, 423, 'the right code is refused once locked: ' + locked.text);
  assert.match(locked.body.error, /recovery code/);

  const recovered = await secondFactor(server, { ticket, recovery_code: factor.recoveryCodes[0] });
  assert.equal(recovered.status, 201, recovered.text);
  const headers = { cookie: cookieFrom(recovered)!, ...sameOrigin(server) };
  const actions = (await activityOf(server, headers)).map((entry) => entry.action);
  assert.ok(actions.includes('two_factor_locked'), `the owner is told: ${actions.join(', ')}`);

  // A recovery code unlocks: codes work again.
  clock.advance(STEP_MS);
  const again = await passwordStep(server, ada.email, ada.password);
  assert.equal((await secondFactor(server, { ticket: again, code: codeAt(factor.secret, clock.now()) })).status, 201);
});

test('the operator’s reset unlocks a locked second factor', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  for (let round = 0; round < 3; round += 1) {
    for (let i = 0; i < 10; i += 1) {
      const ticket = await passwordStep(server, ada.email, ada.password);
      assert.equal((await secondFactor(server, { ticket, code: wrongCodeAt(factor.secret, clock.now()) })).status, 401);
    }
    clock.advance(16 * 60 * 1000);
  }
  const ticket = await passwordStep(server, ada.email, ada.password);
  assert.equal((await secondFactor(server, { ticket, code: codeAt(factor.secret, clock.now()) })).status, 423);
  assert.equal((await server.admin('DELETE', `/admin/v1/users/${ada.userId}/two-factor`)).status, 200);
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 201);
});

test('wrong codes older than 24 h no longer count towards the lock', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  for (let round = 0; round < 3; round += 1) {
    for (let i = 0; i < 10; i += 1) {
      const ticket = await passwordStep(server, ada.email, ada.password);
      assert.equal((await secondFactor(server, { ticket, code: wrongCodeAt(factor.secret, clock.now()) })).status, 401);
    }
    if (round === 0) clock.advance(24 * 60 * 60 * 1000);
    else clock.advance(16 * 60 * 1000);
  }
  const ticket = await passwordStep(server, ada.email, ada.password);
  assert.equal((await secondFactor(server, { ticket, code: codeAt(factor.secret, clock.now()) })).status, 201, '20 in the last 24 h: not locked');
});

test('the activity shows every sign-in with a code or recovery code, every wrong code ("right password, wrong code") and failed sign-in, with address and user agent', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const failed = await server.request('POST', '/portal/v1/session', { headers: { ...sameOrigin(server), 'user-agent': AGENT }, body: { email: ada.email, password: 'not the right password' } });
  assert.equal(failed.status, 401);
  const ticket = await passwordStep(server, ada.email, ada.password);
  for (let i = 0; i < 3; i += 1) assert.equal((await secondFactor(server, { ticket, code: wrongCodeAt(factor.secret, clock.now()) })).status, 401);
  clock.advance(STEP_MS);
  assert.equal((await secondFactor(server, { ticket, code: codeAt(factor.secret, clock.now()) })).status, 201);
  const second = await passwordStep(server, ada.email, ada.password);
  const recovered = await secondFactor(server, { ticket: second, recovery_code: factor.recoveryCodes[1] });
  assert.equal(recovered.status, 201);

  const entries = await activityOf(server, { cookie: cookieFrom(recovered)!, ...sameOrigin(server) });
  const wrongCodes = entries.filter((entry) => entry.action === 'sign_in_wrong_code');
  assert.equal(wrongCodes.length, 3, JSON.stringify(entries));
  const withCode = entries.filter((entry) => entry.action === 'sign_in');
  const withRecovery = entries.filter((entry) => entry.action === 'sign_in_recovery_code');
  assert.ok(withCode.length >= 1);
  assert.equal(withRecovery.length, 1);
  const failures = entries.filter((entry) => entry.action === 'sign_in_failed');
  assert.equal(failures.length, 1);
  for (const entry of [...wrongCodes, withCode[0]!, ...withRecovery, ...failures]) {
    assert.equal(entry.client_address, '127.0.0.1', JSON.stringify(entry));
    assert.equal(entry.user_agent, AGENT, JSON.stringify(entry));
  }
});

test('PUT /v1/users/me {email} on a two-factor account → 403 (change it in the portal); other fields still change', async (t) => {
  const { server, ada } = await enrolledUser(t);
  const key = await server.createKey(ada.userId, { permissions: ['read:users', 'write:users'] });
  const refused = await server.request('PUT', '/v1/users/me', { key: key.key, body: { email: 'someone.else@example.com' } });
  assert.equal(refused.status, 403, refused.text);
  assert.match(refused.body.error, /portal/);
  assert.equal((await server.request('GET', '/v1/users/me', { key: key.key })).body.data.email, ada.email, 'nothing changed');
  const renamed = await server.request('PUT', '/v1/users/me', { key: key.key, body: { name: 'Ada L.' } });
  assert.equal(renamed.status, 200, renamed.text);
  const sameEmail = await server.request('PUT', '/v1/users/me', { key: key.key, body: { email: ada.email.toUpperCase() } });
  assert.equal(sameEmail.status, 200, 'the same email, as it is: no change, no refusal: ' + sameEmail.text);
});

test('POST /portal/v1/two-factor/recovery-codes {current_password, code} → 10 new recovery codes, the old ones void; audited; wrong or missing input changes nothing', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const path = '/portal/v1/two-factor/recovery-codes';
  clock.advance(STEP_MS);
  const bad: Array<[Record<string, unknown>, number]> = [
    [{ current_password: ada.password }, 400],
    [{ code: codeAt(factor.secret, clock.now()) }, 400],
    [{ current_password: 'not the password at all', code: codeAt(factor.secret, clock.now()) }, 400],
    [{ current_password: ada.password, code: wrongCodeAt(factor.secret, clock.now()) }, 400],
    [{ current_password: ada.password, code: '' }, 400],
    [{ current_password: ada.password, code: '123456', extra: 1 }, 400],
  ];
  for (const [body, status] of bad) assert.equal((await server.request('POST', path, { headers: ada.headers, body })).status, status, JSON.stringify(body));
  assert.equal((await server.request('GET', '/portal/v1/two-factor', { headers: ada.headers })).body.data.recovery_codes_left, 10, 'nothing changed');

  const made = await server.request('POST', path, { headers: ada.headers, body: { current_password: ada.password, code: codeAt(factor.secret, clock.now()) } });
  assert.equal(made.status, 200, made.text);
  assert.equal(made.headers.get('cache-control'), 'no-store');
  const fresh: string[] = made.body.data.recovery_codes;
  assert.equal(new Set(fresh).size, 10);
  assert.ok(fresh.every((code) => !factor.recoveryCodes.includes(code)));

  const ticket = await passwordStep(server, ada.email, ada.password);
  assert.equal((await secondFactor(server, { ticket, recovery_code: factor.recoveryCodes[0] })).status, 401, 'an old recovery code is void');
  assert.equal((await secondFactor(server, { ticket, recovery_code: fresh[0] })).status, 201, 'a new one works');
  const audit = await server.admin('GET', `/admin/v1/audit?action=portal.two_factor_recovery_codes&target_id=${ada.userId}`);
  assert.equal(audit.body.data.length, 1);
  assert.ok(!audit.text.includes(fresh[1]!), 'no code in the audit log');

  const plain = await signedInUser(server);
  assert.equal((await server.request('POST', path, { headers: plain.headers, body: { current_password: plain.password, code: '123456' } })).status, 409, 'two-factor sign-in is off');
});
