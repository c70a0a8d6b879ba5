// A creator's own listings in the portal against a real server: every status, performance
// figures from analytics, create/edit/archive with the /v1 rules; a member cannot create, and
// another user's listing is 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('creator: create, see it viewed, edit, archive; own listings in every status, removed ones with the reason', async (t) => {
  const server = await startServer(t);
  const creator = await signedInUser(server, { role: 'creator' });
  const made = await portal(server, creator, 'POST', '/listings', { title: 'Prompt pack', type: 'PROMPT', price: 4.5, tags: ['writing'] });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.body.data.performance, { views: 0, impressions: 0 });
  const id = made.body.data.id;
  const second = (await portal(server, creator, 'POST', '/listings', { title: 'Agent kit', type: 'AGENT', price: 10 })).body.data.id;
  const third = (await portal(server, creator, 'POST', '/listings', { title: 'Dataset', type: 'DATASET', price: 1 })).body.data.id;

  // Someone views it through /v1; the portal shows the count.
  const reader = await server.userWithKey('member', ['read:listings']);
  for (let index = 0; index < 3; index += 1) assert.equal((await server.request('GET', `/v1/listings/${id}`, { key: reader.key })).status, 200);
  await server.request('GET', '/v1/listings', { key: reader.key });
  await eventually(async () => {
    const listed = await portal(server, creator, 'GET', '/listings');
    const mine = listed.body.data.find((listing: any) => listing.id === id);
    return mine.performance.views === 3 && mine.performance.impressions >= 1;
  }, 5_000, 'views and impressions reach the portal');

  const edited = await portal(server, creator, 'PUT', `/listings/${id}`, { price: 5 });
  assert.equal(edited.status, 200);
  assert.equal(edited.body.data.price, 5);
  assert.equal((await portal(server, creator, 'PUT', `/listings/${id}`, { price: 5.001 })).status, 400, 'the /v1 rules');
  assert.equal((await portal(server, creator, 'PUT', `/listings/${id}`, {})).status, 400);
  const archived = await portal(server, creator, 'DELETE', `/listings/${second}`);
  assert.equal(archived.body.data.status, 'archived');
  assert.equal((await portal(server, creator, 'PUT', `/listings/${second}`, { price: 2 })).status, 409, 'archived: no more changes');
  await server.admin('POST', `/admin/v1/listings/${third}/remove`, { reason: 'off-topic' });

  const all = await portal(server, creator, 'GET', '/listings');
  assert.deepEqual(all.body.data.map((listing: any) => [listing.id, listing.status]), [[third, 'removed'], [second, 'archived'], [id, 'active']]);
  assert.equal(all.body.data[0].removal_reason, 'off-topic');
  assert.equal((await portal(server, creator, 'GET', '/listings?status=archived')).body.data.length, 1);
  assert.equal((await portal(server, creator, 'GET', '/listings?status=gone')).status, 400);
  assert.equal((await portal(server, creator, 'PUT', `/listings/${third}`, { price: 2 })).status, 409, 'removed: no more changes');

  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${id}`);
  const actions = audit.body.data.filter((entry: any) => entry.actor?.id === creator.userId).map((entry: any) => entry.action);
  assert.deepEqual(actions.sort(), ['portal.listing_create', 'portal.listing_update']);
});

test("security: a member cannot create listings; another user's listing is 404 to edit and archive, and unchanged", async (t) => {
  const server = await startServer(t);
  const member = await signedInUser(server, { role: 'member' });
  const owner = await signedInUser(server, { role: 'creator' });
  const rival = await signedInUser(server, { role: 'creator' });
  assert.equal((await portal(server, member, 'POST', '/listings', { title: 'Mine', type: 'TOOL', price: 1 })).status, 403);
  const made = await portal(server, owner, 'POST', '/listings', { title: 'Original', type: 'TOOL', price: 1 });
  const id = made.body.data.id;
  assert.equal((await portal(server, rival, 'PUT', `/listings/${id}`, { title: 'Hijacked' })).status, 404);
  assert.equal((await portal(server, rival, 'DELETE', `/listings/${id}`)).status, 404);
  assert.equal((await portal(server, rival, 'GET', '/listings')).body.data.length, 0);
  const still = (await portal(server, owner, 'GET', '/listings')).body.data[0];
  assert.equal(still.title, 'Original');
  assert.equal(still.status, 'active');
});
