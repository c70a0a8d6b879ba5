// Two-factor sign-in over three instances on one PostgreSQL and one Redis: enrolled on one,
// confirmed on another, signed in with a ticket from one and a code on another; one code sent to
// all three at once signs in once (the last accepted step is in the shared record, spent in the
// sign-in's own write); a recovery code works once whichever instance sees it; the operator's
// reset on one ends the sessions everywhere. Codes come from the independent otpauth package.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, clusterForFile } from '../helpers/cluster.ts';
import { codeAt } from '../helpers/two-factor.ts';

const cluster = clusterForFile('two_factor');
const { skip, instances } = cluster;

interface Sent {
  status: number;
  body: any;
  cookie: string | null;
}

/** A portal request to instance `index` as its own page sends it (JSON, same Origin). */
async function portal(index: number, method: string, path: string, body?: unknown, cookie?: string): Promise<Sent> {
  const base = instances[index % instances.length]!.url;
  const response = await fetch(base + path, {
    method,
    headers: { origin: base, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), cookie: response.headers.get('set-cookie')?.split(';', 1)[0] ?? null };
}

test('enrol, confirm, sign in, replay, recovery code and reset, each step on another instance', { skip, timeout: 180_000 }, async () => {
  const email = `two-factor-${process.pid}@example.com`;
  const password = 'correct horse battery staple';
  const user = await call(instances[0]!.url, 'POST', '/admin/v1/users', 'admin', { name: 'Two factors', email });
  const invitation = await call(instances[0]!.url, 'POST', `/admin/v1/users/${user.body.data.id}/invitations`, 'admin');
  const set = await portal(0, 'POST', '/portal/v1/password', { invitation: invitation.body.data.token, password });
  assert.equal(set.status, 201);

  const enrolled = await portal(1, 'POST', '/portal/v1/two-factor', { current_password: password }, set.cookie!);
  assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  const secret: string = enrolled.body.data.secret;
  const confirmed = await portal(2, 'POST', '/portal/v1/two-factor/confirm', { code: codeAt(secret, Date.now()) }, set.cookie!);
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  const recoveryCodes: string[] = confirmed.body.data.recovery_codes;

  // The next step's code (within the ±1 window) on three instances at once, each with its own ticket.
  const tickets: string[] = [];
  for (let index = 0; index < 3; index += 1) {
    const step = await portal(index, 'POST', '/portal/v1/session', { email, password });
    assert.equal(step.status, 202, JSON.stringify(step.body));
    assert.equal(step.cookie, null);
    tickets.push(step.body.data.ticket);
  }
  const code = codeAt(secret, Date.now() + 30_000);
  const answers = await Promise.all(tickets.map((ticket, index) => portal(index + 1, 'POST', '/portal/v1/session/second-factor', { ticket, code })));
  const statuses = answers.map((answer) => answer.status);
  assert.equal(statuses.filter((status) => status === 201).length, 1, `one code on three instances at once: one sign-in (${statuses})`);
  assert.ok(statuses.includes(401), `a replay was checked and refused (${statuses})`);
  const session = answers.find((answer) => answer.status === 201)!.cookie!;
  for (let index = 0; index < 3; index += 1) assert.equal((await portal(index, 'GET', '/portal/v1/me', undefined, session)).status, 200, `the session on instance ${index}`);

  // A recovery code: once, whichever instance sees it.
  const first = await portal(0, 'POST', '/portal/v1/session', { email, password });
  assert.equal((await portal(1, 'POST', '/portal/v1/session/second-factor', { ticket: first.body.data.ticket, recovery_code: recoveryCodes[0] })).status, 201);
  const second = await portal(2, 'POST', '/portal/v1/session', { email, password });
  assert.equal((await portal(0, 'POST', '/portal/v1/session/second-factor', { ticket: second.body.data.ticket, recovery_code: recoveryCodes[0] })).status, 401, 'used on another instance');
  // The ticket was not used up by the wrong recovery code: a right one still works with it.
  assert.equal((await portal(2, 'POST', '/portal/v1/session/second-factor', { ticket: second.body.data.ticket, recovery_code: recoveryCodes[1] })).status, 201);

  // The operator's reset on one instance ends the sessions on all of them.
  assert.equal((await call(instances[2]!.url, 'DELETE', `/admin/v1/users/${user.body.data.id}/two-factor`, 'admin')).status, 200);
  for (let index = 0; index < 3; index += 1) assert.equal((await portal(index, 'GET', '/portal/v1/me', undefined, session)).status, 401, `ended on instance ${index}`);
  assert.equal((await portal(1, 'POST', '/portal/v1/session', { email, password })).status, 201, 'sign-in needs no code after the reset');
});
