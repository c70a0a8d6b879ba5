// Two-factor sign-in end to end against a real server on a manual clock, with codes made by the
// independent `otpauth` package: enrol (secret shown once, sealed at rest), confirm (recovery
// codes once, other sessions end), sign in with a ticket and a code, recovery codes once each,
// no replay of a code (also when sent many times at once), wrong codes counted in the account's
// failure limit, tickets single-use and 5 minutes long (and swept), turning it off, the operator's
// reset, and erasure forgetting it all.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import * as OTPAuth from 'otpauth';
import { ManualClock } from '../../src/clock.ts';
import { SIGN_IN_TICKETS, TWO_FACTOR } from '../../src/domain/account-records.ts';
import { sweepExpiredTickets } from '../../src/modules/portal/sign-in-tickets.ts';
import { cookieFrom, sameOrigin, signedInUser, signIn } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { codeAt, enrolTwoFactor, passwordStep } from '../helpers/two-factor.ts';

const STEP_MS = 30_000;

/** A server on a manual clock and a signed-in user with two-factor sign-in on. */
async function enrolledUser(t: TestContext) {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  return { clock, server, ada, factor: await enrolTwoFactor(server, ada, clock.now()) };
}

function secondFactor(server: TestServer, body: Record<string, unknown>) {
  return server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body });
}

test('enrol → confirm → sign in with a code: 202 with a ticket and no cookie, then 201 with the cookie', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const other = await signIn(server, ada.email, ada.password);

  assert.equal((await server.request('POST', '/portal/v1/two-factor', { headers: ada.headers, body: { current_password: 'not the password at all' } })).status, 400, 'a wrong password enrols nothing');
  const enrolled = await server.request('POST', '/portal/v1/two-factor', { headers: ada.headers, body: { current_password: ada.password } });
  assert.equal(enrolled.status, 201, enrolled.text);
  assert.equal(enrolled.headers.get('cache-control'), 'no-store');
  const { secret, otpauth_uri: uri } = enrolled.body.data;
  // The URI says what the otpauth package needs to make the same codes.
  const parsed = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
  assert.ok(parsed instanceof OTPAuth.TOTP);
  assert.equal(parsed.secret.base32, secret);
  assert.equal(parsed.label, ada.email);
  assert.deepEqual([parsed.algorithm, parsed.digits, parsed.period], ['SHA1', 6, 30]);
  assert.deepEqual((await server.request('GET', '/portal/v1/two-factor', { headers: ada.headers })).body.data, { enabled: false, recovery_codes_left: 0 }, 'not on before a code confirms it');
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 201, 'pending: sign-in still needs no code');

  assert.equal((await server.request('POST', '/portal/v1/two-factor/confirm', { headers: ada.headers, body: { code: wrongCode(secret, clock.now()) } })).status, 400, 'a wrong first code');
  const confirmed = await server.request('POST', '/portal/v1/two-factor/confirm', { headers: ada.headers, body: { code: parsed.generate({ timestamp: clock.now() }) } });
  assert.equal(confirmed.status, 200, confirmed.text);
  const recoveryCodes: string[] = confirmed.body.data.recovery_codes;
  assert.equal(new Set(recoveryCodes).size, 10);
  assert.deepEqual((await server.request('GET', '/portal/v1/two-factor', { headers: ada.headers })).body.data, { enabled: true, recovery_codes_left: 10 });
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: other.headers })).status, 401, 'turning it on ends every other session');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, 'but not the one that did it');

  const signInAnswer = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } });
  assert.equal(signInAnswer.status, 202);
  assert.equal(signInAnswer.body.data.second_factor, 'totp');
  assert.equal(cookieFrom(signInAnswer), null, 'no cookie before the code');
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: 'a wrong password here' } })).status, 401, 'a wrong password: the usual 401');

  clock.advance(STEP_MS);
  const done = await secondFactor(server, { ticket: signInAnswer.body.data.ticket, code: codeAt(secret, clock.now()) });
  assert.equal(done.status, 201, done.text);
  const cookie = cookieFrom(done)!;
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie } })).body.data.email, ada.email);
});

test('a code is accepted once: sent again, or sent with many tickets at once, only one sign-in gets it', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const { secret } = factor;

  clock.advance(STEP_MS);
  const code = codeAt(secret, clock.now());
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code })).status, 201);
  const replay = await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code });
  assert.equal(replay.status, 401, 'the same code again, within its window');
  assert.match(replay.body.error, /already used/);
  // The code of the step before is within the window but older than the one used: refused too.
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now() - STEP_MS) })).status, 401);

  clock.advance(STEP_MS);
  const next = codeAt(secret, clock.now());
  const tickets: string[] = [];
  for (let index = 0; index < 4; index += 1) tickets.push(await passwordStep(server, ada.email, ada.password));
  const answers = await Promise.all(tickets.map((ticket) => secondFactor(server, { ticket, code: next })));
  const statuses = answers.map((answer) => answer.status);
  // At most 2 checks run at once per account (more: 429 at once); of those checked, one wins.
  assert.equal(statuses.filter((status) => status === 201).length, 1, `one code, four sign-ins at once: one succeeds (${statuses})`);
  assert.ok(statuses.includes(401), `another was checked and refused as a replay (${statuses})`);
  assert.ok(statuses.every((status) => [201, 401, 429].includes(status)), `${statuses}`);
});

test('the ±1 step window: the previous and next codes work, two steps off does not', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 15));
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const { secret } = await enrolTwoFactor(server, ada, clock.now() - STEP_MS);
  clock.advance(10 * STEP_MS);
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now() - 2 * STEP_MS) })).status, 401, 'two steps old');
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now() + 2 * STEP_MS) })).status, 401, 'two steps ahead');
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now() - STEP_MS) })).status, 201, 'one step old');
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now() + STEP_MS) })).status, 201, 'one step ahead');
});

test('a recovery code signs in once; it is stored hashed and counted down', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const { recoveryCodes, secret } = factor;
  const first = recoveryCodes[0]!;
  const used = await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), recovery_code: first.toUpperCase() });
  assert.equal(used.status, 201, 'case does not matter');
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), recovery_code: first })).status, 401, 'used once already');
  const signedIn = { cookie: cookieFrom(used)!, ...sameOrigin(server) };
  assert.deepEqual((await server.request('GET', '/portal/v1/two-factor', { headers: signedIn })).body.data, { enabled: true, recovery_codes_left: 9 });
  assert.equal((await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now()), recovery_code: recoveryCodes[1] })).status, 400, 'both at once');

  await server.close();
  const stored = readdirSync(server.dataDir!).map((name) => readFileSync(join(server.dataDir!, name), 'utf8')).join('\n');
  assert.ok(stored.includes('two_factor'), 'the record was written');
  for (const code of recoveryCodes) assert.ok(!stored.includes(code) && !stored.includes(code.replaceAll('-', '')), 'no recovery code in plain text');
  assert.ok(!stored.includes(secret), 'no secret in plain text (base32)');
  assert.ok(!stored.includes(Buffer.from(OTPAuth.Secret.fromBase32(secret).bytes).toString('base64')), 'nor base64');
  assert.ok(!stored.includes(Buffer.from(OTPAuth.Secret.fromBase32(secret).bytes).toString('hex')), 'nor hex');
});

test('wrong codes count in the account failure limit: after 10, 429 even with the right code', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const { secret } = factor;
  clock.advance(STEP_MS);
  const ticket = await passwordStep(server, ada.email, ada.password);
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const answer = await secondFactor(server, { ticket, code: wrongCode(secret, clock.now()) });
    assert.equal(answer.status, 401, `wrong code ${attempt + 1}: ${answer.text}`);
  }
  const blocked = await secondFactor(server, { ticket, code: codeAt(secret, clock.now()) });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 429, 'the same account limit as passwords');
});

test('tickets: single-use, 5 minutes long, and useless after a password change', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const { secret } = factor;
  clock.advance(STEP_MS);
  const ticket = await passwordStep(server, ada.email, ada.password);
  assert.equal((await secondFactor(server, { ticket, code: codeAt(secret, clock.now()) })).status, 201);
  clock.advance(STEP_MS);
  const reused = await secondFactor(server, { ticket, code: codeAt(secret, clock.now()) });
  assert.equal(reused.status, 401, 'a used ticket');
  assert.match(reused.body.error, /Sign in again/);

  const late = await passwordStep(server, ada.email, ada.password);
  clock.advance(5 * 60_000);
  assert.equal((await secondFactor(server, { ticket: late, code: codeAt(secret, clock.now()) })).status, 401, 'a ticket 5 minutes old');
  assert.equal((await secondFactor(server, { ticket: 'not-a-ticket', code: codeAt(secret, clock.now()) })).status, 401, 'a made-up ticket');

  const beforeChange = await passwordStep(server, ada.email, ada.password);
  clock.advance(STEP_MS);
  const session = await secondFactor(server, { ticket: await passwordStep(server, ada.email, ada.password), code: codeAt(secret, clock.now()) });
  const headers = { cookie: cookieFrom(session)!, ...sameOrigin(server) };
  assert.equal((await server.request('POST', '/portal/v1/password', { headers, body: { current_password: ada.password, password: 'a brand new passphrase' } })).status, 200);
  clock.advance(STEP_MS);
  assert.equal((await secondFactor(server, { ticket: beforeChange, code: codeAt(secret, clock.now()) })).status, 401, 'a ticket from before a password change');
});

test('turning it off needs the password and a code (or a recovery code); then sign-in needs no code', async (t) => {
  const { clock, server, ada, factor } = await enrolledUser(t);
  const { secret, recoveryCodes } = factor;
  clock.advance(STEP_MS);
  const off = (body: Record<string, unknown>) => server.request('DELETE', '/portal/v1/two-factor', { headers: ada.headers, body });
  assert.equal((await off({ current_password: ada.password })).status, 400, 'no code');
  assert.equal((await off({ current_password: 'a wrong password here', code: codeAt(secret, clock.now()) })).status, 400, 'wrong password');
  assert.equal((await off({ current_password: ada.password, code: wrongCode(secret, clock.now()) })).status, 400, 'wrong code');
  assert.deepEqual((await server.request('GET', '/portal/v1/two-factor', { headers: ada.headers })).body.data.enabled, true, 'still on');
  const done = await off({ current_password: ada.password, recovery_code: recoveryCodes[3] });
  assert.equal(done.status, 200, done.text);
  assert.deepEqual(done.body.data, { enabled: false, recovery_codes_left: 0 });
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 201);
  assert.equal((await off({ current_password: ada.password, code: codeAt(secret, clock.now()) })).status, 409, 'already off');
});

test("the operator's reset: 200, audited, the user's sessions end, sign-in needs no code", async (t) => {
  const { server, ada } = await enrolledUser(t);
  const ticket = await passwordStep(server, ada.email, ada.password);
  const reset = await server.admin('DELETE', `/admin/v1/users/${ada.userId}/two-factor`);
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual(reset.body.data, { enabled: false, recovery_codes_left: 0 });
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, 'sessions ended');
  assert.equal((await secondFactor(server, { ticket, code: '000000' })).status, 401, 'open tickets ended too');
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${ada.userId}`);
  const entry = audit.body.data.find((item: { action: string }) => item.action === 'user.two_factor_reset');
  assert.ok(entry, 'audited');
  assert.equal(entry.actor.type, 'operator');
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 201);
  assert.equal((await server.admin('DELETE', '/admin/v1/users/usr_nobody/two-factor')).status, 404);
});

test('expired tickets are swept; erasing the user forgets the second factor and every ticket', async (t) => {
  const { clock, server, ada } = await enrolledUser(t);
  await passwordStep(server, ada.email, ada.password);
  clock.advance(5 * 60_000);
  const open = await passwordStep(server, ada.email, ada.password);
  assert.equal(await sweepExpiredTickets(server.app.store, clock), 1, 'the expired ticket only');
  assert.ok(open);
  assert.equal([...server.app.store.values(SIGN_IN_TICKETS)].length, 1);
  assert.equal((await server.admin('DELETE', `/admin/v1/users/${ada.userId}`)).status, 200);
  assert.equal(server.app.store.get(TWO_FACTOR, ada.userId), undefined, 'the second factor is forgotten');
  assert.equal([...server.app.store.values(SIGN_IN_TICKETS)].length, 0, 'and the open ticket');
});

/** A 6-digit code that is none of the codes the window accepts at `atMs`. */
function wrongCode(secret: string, atMs: number): string {
  const near = new Set([-1, 0, 1].map((steps) => codeAt(secret, atMs + steps * STEP_MS)));
  for (let candidate = 0; ; candidate += 1) {
    const code = String(candidate).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}
