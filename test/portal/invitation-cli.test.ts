// The invitation from the operator's tools: `marketplace users invite <id>` and
// AdminClient.users.invite(id) against a real server; the link they print opens the portal.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { AdminClient } from '../../src/client/admin-client.ts';
import { MarketplaceApiError } from '../../src/client/errors.ts';
import { sameOrigin } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

test('CLI users invite <id> prints {url, token, expires_at}; the token sets a password', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const user = await server.createUser({ email: 'cli@example.com' });
  let stdout = '';
  let stderr = '';
  const code = await runCli(['users', 'invite', user.id, '--url', server.url, '--token', ADMIN_TOKEN], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  });
  assert.equal(code, 0, stderr);
  const invitation = JSON.parse(stdout);
  assert.equal(invitation.url, `${server.url}/portal#invitation=${invitation.token}`);
  const set = await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: invitation.token, password: 'set from the cli link' } });
  assert.equal(set.status, 201);
});

test('AdminClient users.invite: the link, and 404 for an unknown user', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const admin = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  const user = await server.createUser();
  const invitation = await admin.users.invite(user.id);
  assert.match(invitation.url, /\/portal#invitation=[A-Za-z0-9_-]{43}$/);
  assert.ok(Date.parse(invitation.expires_at) > Date.now());
  await assert.rejects(admin.users.invite('usr_unknown'), (error: unknown) => error instanceof MarketplaceApiError && error.status === 404);
});
