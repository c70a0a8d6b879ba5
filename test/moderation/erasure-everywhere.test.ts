// Erasure leaves no copy of the user's personal data anywhere the server wrote it, on the file
// back-end and on PostgreSQL: not in reasons the operator wrote (a suspension's, a removal's, on
// her records or on others'), not in audit entries (including earlier names), not in the text of
// her own listings, key names, webhooks or stored replies; and so not in any file of DATA_DIR,
// in a backup taken afterwards, in GET /admin/v1/audit, or in any row of any PostgreSQL table.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test, { after, before, type TestContext } from 'node:test';
import pg from 'pg';
import { startServer, type TestServer } from '../helpers/server.ts';
import { skipUnlessServices, startPostgres, type PostgresService } from '../helpers/services.ts';
import { startReceiver, waitFor } from '../webhooks/fixtures.ts';

const EVERYTHING = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks', 'read:analytics'];

interface Story {
  userId: string;
  /** Every string of hers that must be gone after the erasure. */
  needles: string[];
}

/**
 * Erin's life on the server, up to her erasure: created, renamed by herself and by the operator,
 * suspended and unsuspended with a reason naming her, listings (one removed with a reason quoting
 * her email), a key with her name, a webhook whose receiver fails (deliveries stay pending),
 * stored replies, and the operator's text about other users quoting her name and email.
 */
async function liveAndErase(t: TestContext, server: TestServer, othersQuoteSelfChosenName: boolean): Promise<Story> {
  const unique = `${process.pid}x${Date.now().toString(36)}`;
  const createdName = `Erin Createdname ${unique}`;
  const selfName = `Erin Selfchosen ${unique}`;
  const currentName = `Erin Currentname ${unique}`;
  const email = `erin.${unique}@example.org`;
  const bio = `Erin bio text ${unique}`;
  const keyName = `Erin laptop key ${unique}`;
  const listingTitle = `Erin lamp listing ${unique}`;
  const listingText = `Handmade by Erin, write to ${email}`;
  const hookDescription = `Erin hook ${unique}`;
  const hookPath = `/erin-hook-${unique}`;

  const created = await server.admin('POST', '/admin/v1/users', { name: createdName, email, role: 'creator', bio });
  assert.equal(created.status, 201, created.text);
  const userId: string = created.body.data.id;
  const key = await server.createKey(userId, { permissions: EVERYTHING, name: keyName });
  const other = await server.userWithKey('creator', ['read:listings', 'write:listings']);

  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(500);
    response.end();
  });
  const hook = await server.request('POST', '/v1/webhooks', {
    key: key.key,
    body: { url: `${receiver.url}${hookPath}`, description: hookDescription },
    headers: { 'idempotency-key': `hook-${unique}` },
  });
  assert.equal(hook.status, 201, hook.text);
  const kept = await server.request('POST', '/v1/listings', {
    key: key.key,
    body: { title: listingTitle, description: listingText, type: 'TOOL', price: 3, tags: ['erin'] },
    headers: { 'idempotency-key': `kept-${unique}` },
  });
  assert.equal(kept.status, 201, kept.text);
  const removed = await server.request('POST', '/v1/listings', { key: key.key, body: { title: `Second ${listingTitle}`, description: listingText, type: 'TOOL', price: 4 } });
  assert.equal(removed.status, 201, removed.text);
  const othersListing = await server.request('POST', '/v1/listings', { key: other.key, body: { title: 'A lamp', type: 'TOOL', price: 5 } });
  assert.equal(othersListing.status, 201);

  // Renamed by herself (not audited: only the log's older lines know it), then by the operator.
  assert.equal((await server.request('PUT', '/v1/users/me', { key: key.key, body: { name: selfName } })).status, 200);
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${userId}`, { name: currentName })).status, 200);

  // The operator's words about her, quoting her older name and her email.
  assert.equal((await server.admin('POST', `/admin/v1/users/${userId}/suspend`, { reason: `Spam posted as ${selfName} <${email}>` })).status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/users/${userId}/unsuspend`)).status, 200);
  const removal = await server.admin('POST', `/admin/v1/listings/${removed.body.data.id}/remove`, { reason: `Lists the address ${email}` });
  assert.equal(removal.status, 200, removal.text);
  // ... and about someone else, quoting her current name and email (and, where the back-end
  // keeps the log's older lines, the name she chose herself).
  const otherRemoval = await server.admin('POST', `/admin/v1/listings/${othersListing.body.data.id}/remove`, { reason: `Copied from ${currentName} (${email})` });
  assert.equal(otherRemoval.status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/users/${other.userId}/suspend`, { reason: othersQuoteSelfChosenName ? `Second account of ${selfName}` : `Second account of ${email}` })).status, 200);

  await server.request('GET', `/v1/listings/${kept.body.data.id}`, { key: key.key });
  await waitFor('a failed delivery attempt', () => receiver.received.length >= 1);

  const erased = await server.admin('DELETE', `/admin/v1/users/${userId}`);
  assert.equal(erased.status, 200, erased.text);
  return { userId, needles: [createdName, selfName, currentName, email, bio, keyName, listingTitle, listingText, hookDescription, hookPath] };
}

/** The needles found in `text`, each with a little context. */
function found(where: string, text: string, needles: readonly string[]): string[] {
  return needles.filter((needle) => text.includes(needle)).map((needle) => `${where}: ${needle}`);
}

/** What the operator API shows after the erasure: a backup, the whole audit log, every listing and user. */
async function operatorViews(server: TestServer): Promise<Record<string, string>> {
  const views: Record<string, string> = {};
  const backup = await server.admin('GET', '/admin/v1/backup');
  assert.equal(backup.status, 200);
  views.backup = backup.text;
  for (const path of ['/admin/v1/audit', '/admin/v1/listings', '/admin/v1/users']) {
    const first = await server.admin('GET', `${path}?limit=100`);
    assert.equal(first.status, 200, first.text);
    let text = first.text;
    for (let page = 2; page <= first.body.pagination.total_pages; page += 1) text += (await server.admin('GET', `${path}?limit=100&page=${page}`)).text;
    views[path] = text;
  }
  return views;
}

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

test('file back-end: after erasure no file of DATA_DIR, no backup and no operator view holds her data', async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const story = await liveAndErase(t, server, true);
  const left = filesUnder(server.dataDir!).flatMap((file) => found(file, readFileSync(file, 'latin1'), story.needles));
  for (const [where, text] of Object.entries(await operatorViews(server))) left.push(...found(where, text, story.needles));
  assert.deepEqual(left, []);

  // The erasure itself is audited, without the data; her listings stay, removed and emptied.
  const audit = await server.admin('GET', `/admin/v1/audit?action=user.erase&target_id=${story.userId}`);
  assert.equal(audit.body.data.length, 1);
  const listings = await server.admin('GET', `/admin/v1/listings?owner_id=${story.userId}`);
  assert.deepEqual(listings.body.data.map((listing: { status: string }) => listing.status), ['removed', 'removed']);
});

const skipPostgres = skipUnlessServices('postgresBin');
let postgres: PostgresService | null = null;
before(async () => {
  if (!skipPostgres) postgres = await startPostgres();
});
after(async () => {
  await postgres?.destroy();
});

test('PostgreSQL back-end: after erasure no row of any table, no backup and no operator view holds her data', { skip: skipPostgres, timeout: 120_000 }, async (t) => {
  const databaseUrl = postgres!.createDatabase(`erasure_${process.pid}`);
  const server = await startServer(t, { dataDir: null, config: { databaseUrl }, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const story = await liveAndErase(t, server, false);
  // The self-chosen older name was overwritten in place (PostgreSQL keeps no history), so the
  // server cannot know it in others' text; everything about her is erased whole anyway.
  const left: string[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    assert.ok(tables.rows.length >= 2);
    for (const { table_name: table } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
      left.push(...found(`table ${table}`, rows.rows.map((row) => row.row).join('\n'), story.needles));
    }
  } finally {
    await client.end();
  }
  for (const [where, text] of Object.entries(await operatorViews(server))) left.push(...found(where, text, story.needles));
  assert.deepEqual(left, []);
});
