// Two-factor secrets are sealed under a key derived from the operator token. A server started
// with another token says so in one start-up line, answers a code it cannot check with a clear
// 503 (not a wrong code that counts), still lets recovery codes in, and `marketplace reseal
// --old-token-file` seals every stored secret again under the current token.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { ManualClock } from '../../src/clock.ts';
import { cookieFrom, sameOrigin, signedInUser } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer, temporaryDir } from '../helpers/server.ts';
import { codeAt, enrolTwoFactor, passwordStep } from '../helpers/two-factor.ts';

const NEW_TOKEN = 'a-new-operator-token-9876543210';
const STEP_MS = 30_000;

test('a new operator token: one start-up warning, codes refused with 503 (not counted), recovery codes still work; reseal --old-token-file makes codes work again', async (t) => {
  const dataDir = temporaryDir(t);
  const clock = new ManualClock();
  const first = await startServer(null, { dataDir, clock });
  const ada = await signedInUser(first);
  const factor = await enrolTwoFactor(first, ada, clock.now());
  await first.close();

  const output: string[] = [];
  const server = await startServer(t, { dataDir, clock, env: { MARKETPLACE_ADMIN_TOKEN: NEW_TOKEN }, output, expectedServerErrors: [503] });
  const warnings = output.filter((line) => /operator token/i.test(line) && /two-factor/i.test(line));
  assert.equal(warnings.length, 1, output.join(''));
  assert.match(warnings[0]!, /reseal --old-token-file/);

  clock.advance(STEP_MS);
  const ticket = await passwordStep(server, ada.email, ada.password);
  const refused = await server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body: { ticket, code: codeAt(factor.secret, clock.now()) } });
  assert.equal(refused.status, 503, refused.text);
  assert.match(refused.body.error, /operator token/);
  const recovered = await server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body: { ticket, recovery_code: factor.recoveryCodes[0] } });
  assert.equal(recovered.status, 201, 'recovery codes still work: ' + recovered.text);
  assert.ok(cookieFrom(recovered));

  const oldTokenFile = join(dataDir, '..', `old-token-${process.pid}.txt`);
  writeFileSync(oldTokenFile, `${ADMIN_TOKEN}\n`);
  t.after(() => writeFileSync(oldTokenFile, ''));
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} };
  const code = await runCli(['reseal', '--old-token-file', oldTokenFile, '--url', server.url, '--token', NEW_TOKEN], io);
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { resealed: 1, already_current: 0, unreadable: 0 });

  clock.advance(STEP_MS);
  const again = await passwordStep(server, ada.email, ada.password);
  const signedIn = await server.request('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(server), body: { ticket: again, code: codeAt(factor.secret, clock.now()) } });
  assert.equal(signedIn.status, 201, signedIn.text);

  // A wrong old token opens nothing: said, exit 1.
  stdout = '';
  writeFileSync(oldTokenFile, 'not-the-old-token-at-all-000000\n');
  assert.equal(await runCli(['reseal', '--old-token-file', oldTokenFile, '--url', server.url, '--token', NEW_TOKEN], io), 0, 'all already current');
  assert.deepEqual(JSON.parse(stdout), { resealed: 0, already_current: 1, unreadable: 0 });
  assert.equal(await runCli(['reseal', '--url', server.url, '--token', NEW_TOKEN], io), 2, '--old-token-file is required');
});

test('a server started with the token that sealed the secrets prints no warning', async (t) => {
  const dataDir = temporaryDir(t);
  const clock = new ManualClock();
  const first = await startServer(null, { dataDir, clock });
  const ada = await signedInUser(first);
  await enrolTwoFactor(first, ada, clock.now());
  await first.close();
  const output: string[] = [];
  await startServer(t, { dataDir, clock, output });
  assert.deepEqual(output.filter((line) => /two-factor/i.test(line)), []);
});
