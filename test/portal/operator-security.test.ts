// The operator's side of two-factor sign-in and the third pass's findings: `two_factor` on each
// user the operator API answers, users found by part of the name or email, the reset from the
// CLI and the typed client with a reason; an expired key neither rolled nor moved to a plan
// (409); a listing title of invisible characters refused; `keys roll` refusing an out-of-range
// grace locally.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { AdminClient } from '../../src/client/admin-client.ts';
import { ManualClock } from '../../src/clock.ts';
import { signedInUser } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';
import { enrolTwoFactor } from '../helpers/two-factor.ts';

async function cli(argv: string[], url: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--url', url, '--token', ADMIN_TOKEN], { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} });
  return { code, stdout, stderr };
}

test('GET /admin/v1/users: two_factor on each user; ?q= finds by part of the name or email, case-insensitive', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server, { name: 'Ada Lovelace', email: 'ada.lovelace@example.com' });
  await signedInUser(server, { name: 'Grace Hopper', email: 'grace@navy.example' });
  await enrolTwoFactor(server, ada, clock.now());

  const all = await server.admin('GET', '/admin/v1/users');
  assert.equal(all.status, 200);
  for (const user of all.body.data) assert.equal(typeof user.two_factor, 'boolean', JSON.stringify(user));
  assert.equal(all.body.data.find((user: { id: string }) => user.id === ada.userId).two_factor, true);
  assert.equal(all.body.data.filter((user: { two_factor: boolean }) => user.two_factor).length, 1);

  const byName = await server.admin('GET', '/admin/v1/users?q=LOVEL');
  assert.deepEqual(byName.body.data.map((user: { id: string }) => user.id), [ada.userId]);
  const byEmail = await server.admin('GET', '/admin/v1/users?q=Navy.Ex');
  assert.deepEqual(byEmail.body.data.map((user: { name: string }) => user.name), ['Grace Hopper']);
  assert.equal((await server.admin('GET', '/admin/v1/users?q=nobody-like-this')).body.data.length, 0);
  assert.equal((await server.admin('GET', `/admin/v1/users?q=${'x'.repeat(201)}`)).status, 400);
  const detail = await server.admin('GET', `/admin/v1/users/${ada.userId}`);
  if (detail.status === 200) assert.equal(detail.body.data.two_factor, true);
});

test('marketplace users two-factor-reset <id> --reason, and AdminClient.users.resetTwoFactor: off, the reason audited', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  await enrolTwoFactor(server, ada, clock.now());

  assert.equal((await cli(['users', 'two-factor-reset', ada.userId], server.url)).code, 2, '--reason is required');
  const reset = await cli(['users', 'two-factor-reset', ada.userId, '--reason', 'lost phone, checked by a call'], server.url);
  assert.equal(reset.code, 0, reset.stderr);
  assert.deepEqual(JSON.parse(reset.stdout), { enabled: false, recovery_codes_left: 0 });
  const audit = await server.admin('GET', `/admin/v1/audit?action=user.two_factor_reset&target_id=${ada.userId}`);
  assert.equal(audit.body.data[0].changes.reason, 'lost phone, checked by a call');
  assert.equal((await server.admin('GET', '/admin/v1/users?q=' + encodeURIComponent(ada.email))).body.data[0].two_factor, false);

  const admin = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  assert.deepEqual(await admin.users.resetTwoFactor(ada.userId, 'again'), { enabled: false, recovery_codes_left: 0 });
});

test('an expired key can be neither rolled nor moved to a plan: 409 on the operator and portal routes', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const expiresAt = new Date(clock.now() + 60_000).toISOString();
  const made = await server.request('POST', '/portal/v1/keys', { headers: ada.headers, body: { expires_at: expiresAt } });
  assert.equal(made.status, 201, made.text);
  const keyId = made.body.data.id;
  clock.advance(120_000);

  const answers = {
    adminRoll: await server.admin('POST', `/admin/v1/keys/${keyId}/roll`, {}),
    adminPlan: await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { plan: 'pro' }),
    portalRoll: await server.request('POST', `/portal/v1/keys/${keyId}/roll`, { headers: ada.headers, body: {} }),
    portalPlan: await server.request('PATCH', `/portal/v1/keys/${keyId}`, { headers: ada.headers, body: { plan: 'pro' } }),
    portalRequest: await server.request('POST', '/portal/v1/plan-requests', { headers: ada.headers, body: { key_id: keyId, plan: 'business' } }),
  };
  for (const [name, answer] of Object.entries(answers)) {
    assert.equal(answer.status, 409, `${name}: ${answer.text}`);
    assert.match(answer.body.error, /expired/, name);
  }
  // Other changes of an expired key still work (its name), and a later expiry revives it.
  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { name: 'old laptop' })).status, 200);
  assert.equal((await server.admin('GET', `/admin/v1/keys?user_id=${ada.userId}`)).body.data[0].plan, 'free');
});

test('a listing title made only of invisible characters is refused (400); CLI keys roll refuses an out-of-range --grace-seconds with exit 2', async (t) => {
  const server = await startServer(t);
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  for (const title of ['\u200b\u200b', '\u0083', '\u200b \u2060\ufeff', '\u00ad\u200d']) {
    const answer = await server.request('POST', '/v1/listings', { key: creator.key, body: { title, type: 'AGENT', price: 79 } });
    assert.equal(answer.status, 400, `${JSON.stringify(title)}: ${answer.text}`);
    assert.ok(answer.body.details?.title, answer.text);
  }
  assert.equal((await server.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Zero\u200bwidth inside is fine', type: 'AGENT', price: 79 } })).status, 201);

  const key = await server.createKey(creator.userId);
  for (const grace of ['604801', '99999999999']) {
    const answer = await cli(['keys', 'roll', key.id, '--grace-seconds', grace], server.url);
    assert.equal(answer.code, 2, `${grace}: ${answer.stderr}`);
    assert.match(answer.stderr, /604800/);
  }
  assert.equal((await cli(['keys', 'roll', key.id, '--grace-seconds', '604800'], server.url)).code, 0);
});

test('the OpenAPI schemas of ticket, code and recovery_code refuse "" as the server does (minLength 1)', async (t) => {
  const server = await startServer(t);
  const document = (await server.request('GET', '/openapi.json')).body;
  const bodies: Array<[string, string]> = [
    ['/portal/v1/session/second-factor', 'post'],
    ['/portal/v1/two-factor', 'delete'],
    ['/portal/v1/two-factor/confirm', 'post'],
    ['/portal/v1/me', 'put'],
  ];
  let seen = 0;
  for (const [path, method] of bodies) {
    const schema = document.paths[path][method].requestBody.content['application/json'].schema;
    for (const variant of schema.oneOf ?? [schema]) {
      for (const field of ['ticket', 'code', 'recovery_code']) {
        const property = variant.properties[field];
        if (property === undefined) continue;
        seen += 1;
        assert.equal(property.minLength, 1, `${method} ${path} ${field}`);
      }
    }
  }
  assert.ok(seen >= 7);
  const second = await server.request('POST', '/portal/v1/session/second-factor', { headers: { origin: server.url }, body: { ticket: '', code: '' } });
  assert.equal(second.status, 400, 'the server refuses "" too');
});
