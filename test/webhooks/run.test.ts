// Webhooks people run, through a real server and real local receivers (WEBHOOK_ALLOW_PRIVATE=1):
// editing one (PATCH, under /v1 and the portal), pausing and resuming it (events meanwhile are
// `skipped` outcomes), rotating its secret (two signatures during the grace, each verifying
// with its own secret by the Standard Webhooks rules), sending a retrying event now, recovering
// everything not delivered since a time (one redelivery against the hourly limit; refused
// redeliveries cost nothing), and switching off a webhook whose every delivery failed for 5 days.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import type { ReceivedRequest } from './fixtures.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { answer, startReceiver, waitFor } from './fixtures.ts';

const PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings'];
const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };

function start(t: TestContext, env: Record<string, string> = LOCAL, clock?: ManualClock): Promise<TestServer> {
  return startServer(t, { dataDir: null, env, ...(clock ? { clock } : {}) });
}

async function register(server: TestServer, key: string, body: Record<string, unknown>) {
  const response = await server.request('POST', '/v1/webhooks', { key, body });
  assert.equal(response.status, 201, response.text);
  return response.body.data as { id: string; secret: string; [field: string]: unknown };
}

async function createListing(server: TestServer, key: string, title: string): Promise<string> {
  const response = await server.request('POST', '/v1/listings', { key, body: { title, type: 'TOOL', price: 1 } });
  assert.equal(response.status, 201, response.text);
  return response.body.data.id;
}

async function outcomesUntil(server: TestServer, key: string, webhookId: string, condition: (outcomes: any[]) => boolean): Promise<any[]> {
  let outcomes: any[] = [];
  await eventually(async () => {
    const response = await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { key });
    assert.equal(response.status, 200, response.text);
    outcomes = response.body.data;
    return condition(outcomes);
  }, 15_000, `outcomes of ${webhookId}`);
  return outcomes;
}

/** Only this one signature in the header: does it verify with `secret`? */
function verifiesAlone(secret: string, request: ReceivedRequest, signature: string): boolean {
  return verifySignature(secret, { ...request.headers, 'webhook-signature': signature }, request.body, Math.floor(Date.now() / 1000));
}

test('PATCH /v1/webhooks/:id changes url, events, description; URL rules and unknown fields are 400 naming them; another user 404', async (t) => {
  const first = await startReceiver(t, answer(204));
  const second = await startReceiver(t, answer(204));
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const bob = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: first.url, events: ['listing.created'], description: 'one' });

  const patched = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { url: second.url, events: ['listing.created', 'listing.updated'], description: ' two ' } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.data.id, hook.id);
  assert.equal(patched.body.data.url, second.url);
  assert.deepEqual(patched.body.data.events, ['listing.created', 'listing.updated']);
  assert.equal(patched.body.data.description, 'two');
  assert.equal(patched.body.data.secret, undefined, 'never the secret');

  await createListing(server, ada.key, 'Moved');
  await waitFor('the event at the new URL', () => second.received.length === 1);
  assert.equal(first.received.length, 0);
  assert.ok(verifySignature(hook.secret, second.received[0]!.headers, second.received[0]!.body, Math.floor(Date.now() / 1000)), 'the same secret');

  const unknown = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { description: 'x', secret: 'whsec_x', colour: 'red' } });
  assert.equal(unknown.status, 400, unknown.text);
  assert.ok('secret' in unknown.body.details && 'colour' in unknown.body.details, unknown.text);
  const badEvents = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { events: ['nope'] } });
  assert.equal(badEvents.status, 400, badEvents.text);
  assert.ok('events' in badEvents.body.details);
  const badEnabled = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: 'yes' } });
  assert.equal(badEnabled.status, 400, badEnabled.text);
  assert.ok('enabled' in badEnabled.body.details);
  assert.equal((await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: bob.key, body: { description: 'mine' } })).status, 404);
  assert.equal((await server.request('PATCH', '/v1/webhooks/wh_nothing', { key: ada.key, body: { description: 'x' } })).status, 404);

  const listed = await server.request('GET', '/v1/webhooks', { key: ada.key });
  assert.equal(listed.body.data[0].description, 'two', 'nothing changed by the refused ones');
  assert.equal(listed.body.data[0].url, second.url);
});

test('PATCH re-applies the SSRF address guard when private addresses are not allowed', async (t) => {
  const server = await start(t, {});
  const ada = await server.userWithKey('member', PERMISSIONS);
  const hook = await register(server, ada.key, { url: 'https://example.com/hooks', events: ['listing.created'] });
  for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest', 'http://[::1]/x', 'ftp://example.com/x']) {
    const refused = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { url } });
    assert.equal(refused.status, 400, `${url}: ${refused.text}`);
    assert.ok('url' in refused.body.details, refused.text);
  }
  const listed = await server.request('GET', '/v1/webhooks', { key: ada.key });
  assert.equal(listed.body.data[0].url, 'https://example.com/hooks');
});

test('the portal edits its webhooks the same way, audited', async (t) => {
  const server = await start(t);
  const receiver = await startReceiver(t, answer(204));
  const user = await signedInUser(server);
  const other = await signedInUser(server);
  const made = await server.request('POST', '/portal/v1/webhooks', { headers: user.headers, body: { url: receiver.url, events: ['ping'] } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.data.id;
  const patched = await server.request('PATCH', `/portal/v1/webhooks/${id}`, { headers: user.headers, body: { description: 'from the portal', enabled: false } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.data.description, 'from the portal');
  assert.equal(patched.body.data.enabled, false);
  assert.equal((await server.request('PATCH', `/portal/v1/webhooks/${id}`, { headers: other.headers, body: { description: 'x' } })).status, 404);
  const bad = await server.request('PATCH', `/portal/v1/webhooks/${id}`, { headers: user.headers, body: { active: true } });
  assert.equal(bad.status, 400, bad.text);
  assert.ok('active' in bad.body.details);
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${id}`);
  const actions = audit.body.data.map((entry: any) => entry.action);
  assert.ok(actions.includes('portal.webhook_update'), String(actions));
});

test('pause: nothing is sent and each event is a skipped outcome; resume keeps id and secret', async (t) => {
  const receiver = await startReceiver(t, answer(204));
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['listing.created'] });

  const paused = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: false } });
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.body.data.enabled, false);
  assert.equal(paused.body.data.disabled_reason, 'paused');
  await createListing(server, ada.key, 'While paused 1');
  await createListing(server, ada.key, 'While paused 2');
  const outcomes = await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 2);
  assert.deepEqual(outcomes.map((outcome) => outcome.status), ['skipped', 'skipped']);
  assert.equal(receiver.received.length, 0, 'nothing sent');

  const resumed = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: true } });
  assert.equal(resumed.status, 200, resumed.text);
  assert.equal(resumed.body.data.id, hook.id);
  assert.equal(resumed.body.data.enabled, true);
  assert.equal(resumed.body.data.disabled_reason, null);
  await createListing(server, ada.key, 'After');
  await waitFor('the event after resuming', () => receiver.received.length === 1);
  assert.ok(verifySignature(hook.secret, receiver.received[0]!.headers, receiver.received[0]!.body, Math.floor(Date.now() / 1000)), 'the same secret');
});

test('resume a webhook switched off by a 410', async (t) => {
  let gone = true;
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(gone ? 410 : 204);
    response.end();
  });
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['ping', 'listing.created'] });
  await eventually(async () => (await server.request('GET', '/v1/webhooks', { key: ada.key })).body.data[0].active === false, 15_000, 'switched off by the 410');
  const listed = await server.request('GET', '/v1/webhooks', { key: ada.key });
  assert.equal(listed.body.data[0].disabled_reason, 'gone');
  gone = false;
  const resumed = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: true } });
  assert.equal(resumed.status, 200, resumed.text);
  assert.equal(resumed.body.data.active, true);
  await createListing(server, ada.key, 'Back');
  await waitFor('delivery after resuming', () => receiver.received.length === 2);
  assert.ok(verifySignature(hook.secret, receiver.received[1]!.headers, receiver.received[1]!.body, Math.floor(Date.now() / 1000)));
});

test('rotate-secret: 201 with the new secret (no-store); two signatures during the grace, new first; a second rotation ends the oldest at once', async (t) => {
  const receiver = await startReceiver(t, answer(204));
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const bob = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['listing.created'] });

  const rotated = await server.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: ada.key, body: { grace_seconds: 3600 } });
  assert.equal(rotated.status, 201, rotated.text);
  assert.match(rotated.headers.get('cache-control') ?? '', /no-store/);
  const { secret: second, previous_secret_expires_at } = rotated.body.data;
  assert.match(second, /^whsec_/);
  assert.notEqual(second, hook.secret);
  const expires = Date.parse(previous_secret_expires_at);
  assert.ok(Math.abs(expires - (Date.now() + 3_600_000)) < 60_000, previous_secret_expires_at);

  await createListing(server, ada.key, 'During grace');
  await waitFor('the first delivery', () => receiver.received.length === 1);
  const during = receiver.received[0]!;
  const signatures = String(during.headers['webhook-signature']).split(' ');
  assert.equal(signatures.length, 2, String(during.headers['webhook-signature']));
  assert.ok(signatures.every((signature) => signature.startsWith('v1,')));
  assert.ok(verifiesAlone(second, during, signatures[0]!), 'the first verifies with the new secret');
  assert.ok(verifiesAlone(hook.secret, during, signatures[1]!), 'the second verifies with the old secret');
  assert.ok(!verifiesAlone(hook.secret, during, signatures[0]!));

  const again = await server.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: ada.key, body: {} });
  assert.equal(again.status, 201, again.text);
  const third = again.body.data.secret;
  assert.ok(Math.abs(Date.parse(again.body.data.previous_secret_expires_at) - (Date.now() + 86_400_000)) < 60_000, 'a day by default');
  await createListing(server, ada.key, 'After second');
  await waitFor('the second delivery', () => receiver.received.length === 2);
  const after = receiver.received[1]!;
  const afterSignatures = String(after.headers['webhook-signature']).split(' ');
  assert.equal(afterSignatures.length, 2);
  assert.ok(verifiesAlone(third, after, afterSignatures[0]!));
  assert.ok(verifiesAlone(second, after, afterSignatures[1]!));
  assert.ok(!verifySignature(hook.secret, after.headers, after.body, Math.floor(Date.now() / 1000)), 'the first secret ended at once');

  const none = await server.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: ada.key, body: { grace_seconds: 0 } });
  assert.equal(none.status, 201, none.text);
  await createListing(server, ada.key, 'No grace');
  await waitFor('the third delivery', () => receiver.received.length === 3);
  const single = receiver.received[2]!;
  assert.equal(String(single.headers['webhook-signature']).split(' ').length, 1, 'after the grace: one signature');
  assert.ok(verifySignature(none.body.data.secret, single.headers, single.body, Math.floor(Date.now() / 1000)));

  for (const body of [{ grace_seconds: -1 }, { grace_seconds: 604_801 }, { grace_seconds: 'soon' }, { grace: 5 }]) {
    const refused = await server.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: ada.key, body });
    assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
  }
  assert.equal((await server.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: bob.key, body: {} })).status, 404);
});

test('redeliver of a retrying event sends it now and replaces its pending retry', async (t) => {
  let failing = true;
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(failing ? 503 : 204);
    response.end();
  });
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['listing.created'] });
  await createListing(server, ada.key, 'Retry me');
  const [retrying] = await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 1);
  assert.equal(retrying.status, 'retrying');
  failing = false;
  const again = await server.request('POST', `/v1/webhooks/${hook.id}/deliveries/${retrying.event_id}/redeliver`, { key: ada.key });
  assert.equal(again.status, 202, again.text);
  await waitFor('the event sent now', () => receiver.received.length === 2);
  const outcomes = await outcomesUntil(server, ada.key, hook.id, (list) => list[0]?.status === 'delivered');
  assert.equal(outcomes[0].event_id, retrying.event_id);
  assert.equal(receiver.received[1]!.headers['webhook-id'], retrying.event_id);
  const pending = server.app.store.values('deliveries' as any);
  assert.equal([...pending].length, 0, 'no retry left pending');
});

test('recover {since}: everything not delivered since then again now, oldest first, same webhook-id; one redelivery; refused ones cost nothing', async (t) => {
  let failing = true;
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(failing ? 500 : 204);
    response.end();
  });
  const server = await start(t, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' });
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['listing.created'] });
  const since = new Date(Date.now() - 1000).toISOString();
  await createListing(server, ada.key, 'One');
  await createListing(server, ada.key, 'Two');
  await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 2);
  await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: false } });
  await createListing(server, ada.key, 'Three');
  await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 3);
  await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: true } });
  const sentBefore = receiver.received.map((request) => String(request.headers['webhook-id']));
  assert.equal(sentBefore.length, 2);

  failing = false;
  const recovered = await server.request('POST', `/v1/webhooks/${hook.id}/recover`, { key: ada.key, body: { since } });
  assert.equal(recovered.status, 202, recovered.text);
  assert.equal(recovered.body.events, 3);
  await waitFor('three more', () => receiver.received.length === 5);
  const resent = receiver.received.slice(2).map((request) => JSON.parse(request.body));
  assert.deepEqual(resent.map((event) => event.data.title), ['One', 'Two', 'Three'], 'oldest first');
  assert.deepEqual(resent.slice(0, 2).map((event) => event.id), sentBefore, 'the same webhook-id');
  for (const request of receiver.received.slice(2)) assert.ok(verifySignature(hook.secret, request.headers, request.body, Math.floor(Date.now() / 1000)));

  // Nothing left to recover now; bad bodies are 400.
  await outcomesUntil(server, ada.key, hook.id, (list) => list.slice(0, 3).every((outcome) => outcome.status === 'delivered'));
  const nothing = await server.request('POST', `/v1/webhooks/${hook.id}/recover`, { key: ada.key, body: { since } });
  assert.equal(nothing.status, 202, nothing.text);
  assert.equal(nothing.body.events, 0);
  for (const body of [{}, { since: 'yesterday' }, { since: new Date(Date.now() - 40 * 86_400_000).toISOString() }, { since, more: 1 }]) {
    const refused = await server.request('POST', `/v1/webhooks/${hook.id}/recover`, { key: ada.key, body });
    assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
  }

  // 2 recoveries used so far; refused redeliveries (404) use nothing: 58 more are allowed.
  for (let i = 0; i < 5; i += 1) {
    const missing = await server.request('POST', `/v1/webhooks/${hook.id}/deliveries/evt_missing${i}/redeliver`, { key: ada.key });
    assert.equal(missing.status, 404, missing.text);
  }
  const eventId = sentBefore[0]!;
  let accepted = 0;
  for (let i = 0; i < 60; i += 1) {
    const response = await server.request('POST', `/v1/webhooks/${hook.id}/deliveries/${eventId}/redeliver`, { key: ada.key });
    if (response.status === 202) accepted += 1;
    else assert.equal(response.status, 429, response.text);
  }
  assert.equal(accepted, 58, 'two recoveries counted one each; the 404s counted nothing');
});

test('a webhook whose every delivery has failed for 5 days is switched off with disabled_reason, audited', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const receiver = await startReceiver(t, answer(500));
  const server = await start(t, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' }, clock);
  const ada = await server.userWithKey('creator', PERMISSIONS, 100_000);
  const hook = await register(server, ada.key, { url: receiver.url, events: ['listing.created'] });
  await createListing(server, ada.key, 'Day 0');
  await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 1);
  clock.advance(4 * 86_400_000);
  await createListing(server, ada.key, 'Day 4');
  await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 2);
  assert.equal((await server.request('GET', '/v1/webhooks', { key: ada.key })).body.data[0].active, true, 'four days is not five');
  clock.advance(86_400_000 + 1000);
  await createListing(server, ada.key, 'Day 5');
  await outcomesUntil(server, ada.key, hook.id, (list) => list.length === 3);
  const listed = await server.request('GET', '/v1/webhooks', { key: ada.key });
  assert.equal(listed.body.data[0].active, false);
  assert.equal(listed.body.data[0].enabled, false);
  assert.equal(listed.body.data[0].disabled_reason, 'failing');
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${hook.id}`);
  assert.ok(audit.body.data.some((entry: any) => entry.action === 'webhook.disable'), audit.text);
  // Resumed, it starts counting again.
  const resumed = await server.request('PATCH', `/v1/webhooks/${hook.id}`, { key: ada.key, body: { enabled: true } });
  assert.equal(resumed.body.data.active, true);
});
