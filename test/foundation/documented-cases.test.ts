// What the served document promises, tried against a real server: every operation's curl
// example (x-codeSamples) is sent as written (ids and keys replaced by ones made first) and must
// succeed, and every error status an operation documents is provoked by a request made for it
// and must come back with that status. Every JSON answer is checked against the document by the
// server helper (AnswerChecker). A documented error status that is neither provoked here nor
// listed below as one a test cannot provoke fails the test, so a new status needs a case.
// Not in test:unit (slow: about 430 cases, each on a server of its own, and nearly 300 password
// hashes for the portal users and failed sign-ins they need); npm test runs it.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { signedInUser, sameOrigin, type PortalUser } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer, type TestResponse, type TestServer } from '../helpers/server.ts';
import { enrolTwoFactor, passwordStep } from '../helpers/two-factor.ts';
import { eventually } from '../helpers/eventually.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

interface Operation {
  method: string;
  /** The document's path, e.g. /v1/listings/{id}. */
  path: string;
  statuses: string[];
  example: string | undefined;
  hasBody: boolean;
}

async function documentedOperations(server: TestServer): Promise<Operation[]> {
  const { body: document } = await server.request('GET', '/openapi.json');
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        statuses: Object.keys(operation.responses).filter((status) => status.startsWith('4') || status.startsWith('5')),
        example: operation['x-codeSamples']?.find((sample: { lang: string }) => sample.lang === 'curl')?.source,
        hasBody: operation.requestBody !== undefined,
      });
    }
  }
  return operations;
}

/** The objects a request is about, made fresh for it, and the credentials to send. */
class World {
  readonly server: TestServer;
  /** A creator with a key holding every scope. */
  creator!: { userId: string; key: string; keyId: string };
  portal!: PortalUser;
  /** Where new webhooks point: a local receiver answering 204 for the deliveries routes, else an address never reached. */
  hookUrl = 'https://example.com/hook';
  private made = 0;

  constructor(server: TestServer) {
    this.server = server;
  }

  /** The creator always; the portal user (a password to hash, the slow part) only for what needs one. */
  async setUp(path: string, t: TestContext): Promise<void> {
    if (path.includes('/deliveries')) this.hookUrl = (await startReceiver(t, answer(204))).url;
    this.creator = await this.server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:analytics', 'read:webhooks', 'write:webhooks']);
    if (path.startsWith('/portal/') || path.includes('plan-requests') || path === '/admin/v1/plans') this.portal = await signedInUser(this.server, { role: 'creator' });
  }

  /** A creator with an email of their own (an invitation needs one). */
  async user(fields: { email?: string } = {}): Promise<string> {
    this.made += 1;
    return (await this.server.createUser({ role: 'creator', email: `documented-${this.made}@example.com`, ...fields })).id;
  }

  async listing(): Promise<string> {
    this.made += 1;
    const answer = await this.server.request('POST', '/v1/listings', { key: this.creator.key, body: { title: `Listing ${this.made}`, type: 'SKILL', price: 1 } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  async key(userId = this.creator.userId): Promise<string> {
    return (await this.server.createKey(userId)).id;
  }

  async webhook(): Promise<string> {
    const answer = await this.server.request('POST', '/v1/webhooks', { key: this.creator.key, body: { url: this.hookUrl } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  async portalKey(): Promise<string> {
    const answer = await this.server.request('POST', '/portal/v1/keys', { headers: this.portal.headers, body: { name: `k${++this.made}` } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  async portalWebhook(): Promise<string> {
    const answer = await this.server.request('POST', '/portal/v1/webhooks', { headers: this.portal.headers, body: { url: this.hookUrl } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  async portalListing(): Promise<string> {
    const answer = await this.server.request('POST', '/portal/v1/listings', { headers: this.portal.headers, body: { title: `Portal listing ${++this.made}`, type: 'SKILL', price: 1 } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  async planRequest(): Promise<string> {
    const answer = await this.server.request('POST', '/portal/v1/plan-requests', { headers: this.portal.headers, body: { key_id: await this.portalKey(), plan: 'business' } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.data.id;
  }

  /** Another session of the portal user (signed in again), by its public id: one the current session may end. */
  async otherSession(): Promise<string> {
    const signIn = await this.server.request('POST', '/portal/v1/session', { headers: sameOrigin(this.server), body: { email: this.portal.email, password: this.portal.password } });
    assert.equal(signIn.status, 201, signIn.text);
    const listed = await this.server.request('GET', '/portal/v1/sessions', { headers: this.portal.headers });
    const other = (listed.body.data as { id: string; current: boolean }[]).find((session) => !session.current);
    assert.ok(other, listed.text);
    return other.id;
  }

  /** An existing object of the kind the path names, for requests whose point is elsewhere. */
  async idFor(path: string): Promise<string> {
    if (path.startsWith('/portal/v1/keys/')) return this.portalKey();
    if (path.startsWith('/portal/v1/webhooks/')) return this.portalWebhook();
    if (path.startsWith('/portal/v1/listings/')) return this.portalListing();
    if (path.startsWith('/v1/listings/') || path.startsWith('/admin/v1/listings/')) return this.listing();
    if (path.startsWith('/v1/users/') || path.startsWith('/admin/v1/users/')) return this.user();
    if (path.startsWith('/v1/webhooks/')) return this.webhook();
    if (path.startsWith('/admin/v1/keys/')) return this.key();
    if (path.startsWith('/admin/v1/plan-requests/') || path.startsWith('/portal/v1/plan-requests/')) return this.planRequest();
    if (path.startsWith('/portal/v1/sessions/')) return this.otherSession();
    throw new Error(`no object kind for ${path}`);
  }

  async concrete(path: string, id?: string): Promise<string> {
    const withId = path.includes('{id}') ? path.replace('{id}', id ?? (await this.idFor(path))) : path;
    if (!withId.includes('{event_id}')) return withId;
    return withId.replace('{event_id}', await this.deliveredEvent(withId));
  }

  /** The id of an event delivered to the webhook the path names (its ping, once the receiver has answered). */
  async deliveredEvent(path: string): Promise<string> {
    const [, base, webhookId] = /^(\/(?:portal\/)?v1)\/webhooks\/([^/]+)\//.exec(path)!;
    const headers = base === '/portal/v1' ? this.portal.headers : { authorization: `Bearer ${this.creator.key}` };
    let eventId = '';
    await eventually(async () => {
      const outcomes = (await this.server.request('GET', `${base}/webhooks/${webhookId}/deliveries`, { headers })).body?.data ?? [];
      eventId = outcomes.find((outcome: { status: string }) => outcome.status === 'delivered')?.event_id ?? '';
      return eventId !== '';
    }, 30_000, `a delivered event on ${webhookId}`);
    return eventId;
  }

  /** The credentials the operation's kind of route takes. */
  auth(path: string): Record<string, string> {
    if (path.startsWith('/v1/')) return { authorization: `Bearer ${this.creator.key}` };
    if (path.startsWith('/admin/') || path === '/metrics') return { authorization: `Bearer ${ADMIN_TOKEN}` };
    if (path.startsWith('/portal/')) return { ...this.portal.headers };
    return {};
  }

  send(method: string, path: string, options: { headers?: Record<string, string>; body?: unknown; rawBody?: string | Buffer } = {}): Promise<TestResponse> {
    return this.server.request(method, path, options);
  }
}

// ---------------------------------------------------------------------------------------------
// The curl examples

/** Words of a shell command line, with '…' and "…" quoting (enough for the examples). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

interface CurlRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** `-b cookies.txt`: the example sends the session cookie an earlier call saved. */
  sendsCookie: boolean;
}

function parseCurl(source: string): CurlRequest {
  const words = shellWords(source);
  assert.equal(words[0], 'curl');
  const request: CurlRequest = { method: '', path: '', headers: {}, body: undefined, sendsCookie: false };
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    if (word === '-X') request.method = words[++index]!;
    else if (word === '-H') {
      const header = words[++index]!;
      const colon = header.indexOf(':');
      request.headers[header.slice(0, colon).toLowerCase()] = header.slice(colon + 1).trim();
    } else if (word === '-d') request.body = words[++index]!;
    else if (word === '-b') {
      index += 1;
      request.sendsCookie = true;
    } else if (word === '-c' || word === '-o') index += 1;
    else if (word.startsWith('http://127.0.0.1:3000/')) request.path = word.slice('http://127.0.0.1:3000'.length);
    else if (word !== '-s') throw new Error(`curl option the test does not read: ${word}`);
  }
  request.method ||= request.body === undefined ? 'GET' : 'POST';
  return request;
}

/** A case's server settings: sign-up opened where asked, and webhooks to this machine allowed for the deliveries routes (their receiver is local). */
function envFor(path: string, signUpOpen: boolean): Record<string, string> {
  return { ...(signUpOpen ? { PORTAL_SIGNUP: 'open' } : {}), ...(path.includes('/deliveries') ? { WEBHOOK_ALLOW_PRIVATE: '1' } : {}) };
}

/** The example ids the document uses, each replaced by a fresh object of its kind. */
const EXAMPLE_IDS: Record<string, (world: World, path: string) => Promise<string>> = {
  lst_4fQ2kLm9XcVb7NpR1sTz: (world, path) => (path.startsWith('/portal/') ? world.portalListing() : world.listing()),
  usr_8hJ3kQ0pLr5sT2vW9xYz: (world) => world.user(),
  key_2bN7cD4fG6hJ8kL0mP1q: (world, path) => (path.startsWith('/portal/') ? world.portalKey() : world.key()),
  wh_3kT9pQ2mXz7LbV1nR5sW: (world, path) => (path.startsWith('/portal/') ? world.portalWebhook() : world.webhook()),
  prq_4cT9wB2mQx7LpZ0aR5sd: (world) => world.planRequest(),
  ses_4f1c2a9b7e3d5c8a0b6f2e1d: (world) => world.otherSession(),
  // After the webhook's id is in the path: an event that webhook was sent.
  evt_Q7mZ2xLp0sK4vN8rT1bY: (world, path) => world.deliveredEvent(path),
  // The recovery examples' `since`: an hour ago, within the kept events whenever the test runs.
  '2026-01-31T12:00:00Z': async () => new Date(Date.now() - 3_600_000).toISOString(),
};

/** What an example needs beyond fresh objects: the state the example's call starts from. */
const EXAMPLE_PREPARATION: Record<string, (world: World, path: string, body: Record<string, any> | undefined) => Promise<void>> = {
  'POST /admin/v1/users/{id}/unsuspend': async (world, path) => {
    assert.equal((await world.server.admin('POST', path.replace('/unsuspend', '/suspend'), { reason: 'spam' })).status, 200);
  },
  'POST /admin/v1/listings/{id}/restore': async (world, path) => {
    assert.equal((await world.server.admin('POST', path.replace('/restore', '/remove'), { reason: 'spam' })).status, 200);
  },
  'POST /portal/v1/session': async (world, _path, body) => {
    await signedInUser(world.server, { email: body!.email, password: body!.password });
  },
  'POST /portal/v1/plan-requests': async () => {},
  // A top-up counts against a quota: the key's plan gets one first.
  'POST /admin/v1/keys/{id}/quota': async (world, path) => {
    const plans = [{ id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: { requests: 1000, period: 'day' } }];
    assert.equal((await world.server.admin('PUT', '/admin/v1/plans', { plans })).status, 200);
    assert.equal((await world.server.admin('PATCH', path.replace('/quota', ''), { plan: 'free' })).status, 200);
  },
  'POST /portal/v1/two-factor': async (world, _path, body) => {
    world.portal = await signedInUser(world.server, { password: body!.current_password });
  },
};

/** Examples a fresh server cannot run as written, and why. */
const TOTP_CODE = 'the code in the example is what an authenticator app would show at one moment for one secret; test/portal/two-factor.test.ts sends real ones';
const EXAMPLES_NOT_RUN: Record<string, string> = {
  'POST /portal/v1/two-factor/confirm': TOTP_CODE,
  'DELETE /portal/v1/two-factor': TOTP_CODE,
  'POST /portal/v1/session/second-factor': TOTP_CODE,
  'POST /portal/v1/two-factor/recovery-codes': TOTP_CODE,
  'GET /v1/events/stream': 'the stream stays open and the example resumes after an event of its own; test/webhooks/events.test.ts reads streams as they arrive, resumes and ends them',
};

/** The placeholder the password example holds where the invitation link's token goes. */
const INVITATION_PLACEHOLDER = '<token from the link>';

async function runExample(world: World, operation: Operation): Promise<TestResponse> {
  const request = parseCurl(operation.example!);
  let path = request.path;
  let body = request.body;
  for (const [exampleId, make] of Object.entries(EXAMPLE_IDS)) {
    if (!path.includes(exampleId) && !(body ?? '').includes(exampleId)) continue;
    const id = await make(world, path);
    path = path.replaceAll(exampleId, id);
    body = body?.replaceAll(exampleId, id);
  }
  if (body?.includes(INVITATION_PLACEHOLDER)) {
    const invitation = await world.server.admin('POST', `/admin/v1/users/${await world.user()}/invitations`);
    body = body.replace(INVITATION_PLACEHOLDER, invitation.body.data.token);
  }
  const parsedBody = body === undefined ? undefined : JSON.parse(body);
  await EXAMPLE_PREPARATION[`${operation.method} ${operation.path}`]?.(world, path, parsedBody);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = value.replace('$KEY', world.creator.key).replace('$ADMIN_TOKEN', ADMIN_TOKEN).replace('http://127.0.0.1:3000', world.server.url);
  }
  if (request.sendsCookie) headers.cookie = world.portal.cookie;
  return world.send(request.method, path, { headers, ...(body === undefined ? {} : { rawBody: body }) });
}

test('every curl example in the document succeeds as written, and its answer matches the document', async (t) => {
  const probe = await startServer(t, { dataDir: null });
  const operations = (await documentedOperations(probe)).filter((operation) => operation.example !== undefined);
  assert.ok(operations.length >= 60, `examples found: ${operations.length}`);
  for (const operation of operations) {
    const label = `${operation.method} ${operation.path}`;
    if (EXAMPLES_NOT_RUN[label]) continue;
    await t.test(label, async (t) => {
      // A server of its own: examples reuse one email, one plan list, and some end what they touch.
      const signUpOpen = operation.path === '/portal/v1/signup';
      const world = new World(await startServer(t, { dataDir: null, env: envFor(operation.path, signUpOpen) }));
      await world.setUp(operation.path, t);
      const answer = await runExample(world, operation);
      assert.ok(answer.status >= 200 && answer.status < 300, `${label}: ${answer.status} ${answer.text.slice(0, 300)}`);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// The documented errors

type Provoke = (world: World, operation: Operation) => Promise<TestResponse>;

const v1 = (operation: Operation): boolean => operation.path.startsWith('/v1/');
const portal = (operation: Operation): boolean => operation.path.startsWith('/portal/');
const operator = (operation: Operation): boolean => operation.path.startsWith('/admin/') || operation.path === '/metrics';
const json = { 'content-type': 'application/json' };

/** A body the operation would accept, so that only the provoked fault is wrong. */
async function validBody(world: World, operation: Operation): Promise<unknown> {
  const bodies: Record<string, () => Promise<unknown>> = {
    'PUT /v1/listings/{id}': async () => ({ price: 2 }),
    'PUT /portal/v1/listings/{id}': async () => ({ price: 2 }),
    'POST /portal/v1/listings': async () => ({ title: 'T', type: 'SKILL', price: 1 }),
    'PUT /v1/users/me': async () => ({ bio: 'x' }),
    'PUT /portal/v1/me': async () => ({ bio: 'x' }),
    'PATCH /admin/v1/users/{id}': async () => ({ bio: 'x' }),
    'PATCH /admin/v1/keys/{id}': async () => ({ rate_limit: 5 }),
    'PATCH /portal/v1/keys/{id}': async () => ({ name: 'x' }),
    'POST /admin/v1/users/{id}/suspend': async () => ({ reason: 'spam' }),
    'POST /admin/v1/listings/{id}/remove': async () => ({ reason: 'spam' }),
    'POST /v1/listings': async () => ({ title: 'T', type: 'SKILL', price: 1 }),
    'POST /v1/webhooks': async () => ({ url: 'https://example.com/h' }),
    'POST /v1/webhooks/{id}/recover': async () => ({ since: new Date(Date.now() - 60_000).toISOString() }),
    'POST /portal/v1/webhooks/{id}/recover': async () => ({ since: new Date(Date.now() - 60_000).toISOString() }),
    'POST /admin/v1/keys': async () => ({ user_id: world.creator.userId }),
    'POST /admin/v1/keys/{id}/quota': async () => ({ add: 1 }),
    'POST /admin/v1/users': async () => ({ name: 'N' }),
  };
  return (await bodies[`${operation.method} ${operation.path}`]?.()) ?? {};
}

/** Provocations that work the same way on every operation of a kind. */
const GENERAL: Record<string, (operation: Operation) => Provoke | undefined> = {
  // Every route refuses %00 in its query before anything else; a route with a body also refuses broken JSON.
  '400': () => async (world, operation) => {
    const path = await world.concrete(operation.path);
    const nul = await world.send(operation.method, `${path}?x=%00`, { headers: world.auth(operation.path) });
    if (!operation.hasBody) return nul;
    assert.equal(nul.status, 400, `%00: ${nul.text}`);
    return world.send(operation.method, path, { headers: { ...world.auth(operation.path), ...json }, rawBody: '{"unterminated' });
  },
  '401': (operation) => (v1(operation) || operator(operation) || portal(operation)
    ? async (world, op) => world.send(op.method, await world.concrete(op.path), { headers: portal(op) ? sameOrigin(world.server) : {}, ...(op.hasBody ? { body: await validBody(world, op) } : {}) })
    : undefined),
  '403': (operation) => {
    if (v1(operation)) {
      return async (world, op) => {
        const { key } = await world.server.userWithKey('creator', ['read:analytics']);
        const path = await world.concrete(op.path);
        // A key allowed nothing this route needs (the analytics routes get one allowed only listings).
        const other = op.path.startsWith('/v1/analytics/') ? (await world.server.userWithKey('creator', ['read:listings'])).key : key;
        return world.send(op.method, path, { headers: { authorization: `Bearer ${other}` }, ...(op.hasBody ? { body: await validBody(world, op) } : {}) });
      };
    }
    if (portal(operation) && operation.method !== 'GET') {
      return async (world, op) => world.send(op.method, await world.concrete(op.path), { headers: { cookie: world.portal.cookie, origin: 'https://elsewhere.example' }, ...(op.hasBody ? { body: {} } : {}) });
    }
    return undefined;
  },
  '404': (operation) => (operation.path.includes('{id}')
    ? async (world, op) => world.send(op.method, op.path.replace('{id}', 'nothing_here_0000000000'), { headers: world.auth(op.path), ...(op.hasBody ? { body: await validBody(world, op) } : {}) })
    : undefined),
  '412': () => async (world, operation) =>
    world.send(operation.method, await world.concrete(operation.path), { headers: { ...world.auth(operation.path), 'if-match': '"not-the-current-etag"' }, ...(operation.hasBody ? { body: await validBody(world, operation) } : {}) }),
  '413': () => async (world, operation) =>
    world.send(operation.method, await world.concrete(operation.path), { headers: { ...world.auth(operation.path), ...json }, rawBody: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }) }),
  '415': () => async (world, operation) =>
    world.send(operation.method, await world.concrete(operation.path), { headers: { ...world.auth(operation.path), 'content-type': 'text/plain' }, rawBody: '{}' }),
  '422': (operation) => (v1(operation)
    ? async (world, op) => {
        const headers = { ...world.auth(op.path), 'idempotency-key': `reuse-${Math.random()}` };
        const path = await world.concrete(op.path);
        const body = (await validBody(world, op)) as Record<string, unknown>;
        const first = await world.send(op.method, path, { headers, body });
        assert.ok(first.status < 300, first.text);
        return world.send(op.method, path, { headers, body: { ...body, description: 'another request' } });
      }
    : undefined),
  '429': (operation) => {
    if (v1(operation)) {
      return async (world, op) => {
        const { key } = await world.server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:analytics', 'read:webhooks', 'write:webhooks'], 1);
        const path = await world.concrete(op.path);
        await world.send('GET', '/v1/users/me', { headers: { authorization: `Bearer ${key}` } });
        return world.send(op.method, path, { headers: { authorization: `Bearer ${key}` }, ...(op.hasBody ? { body: await validBody(world, op) } : {}) });
      };
    }
    if (operator(operation)) {
      // The failed-authentication limit (100 a minute per address), on a server of its own.
      return async (_world, op) => {
        const server = await startServer(null, { dataDir: null });
        try {
          for (let attempt = 0; attempt < 101; attempt += 1) await server.request('GET', '/admin/v1/stats', { headers: { authorization: 'Bearer wrong' } });
          return await server.request(op.method, op.path.replace('{id}', 'x'), { headers: { authorization: 'Bearer wrong' } });
        } finally {
          await server.close();
        }
      };
    }
    return undefined;
  },
};

/** Cases that depend on the operation: the conflicts, and the limits of a single route. */
const SPECIFIC: Record<string, Provoke> = {
  // A key on a plan without a quota (every default plan has none).
  '409 POST /admin/v1/keys/{id}/quota': async (world) => world.send('POST', `/admin/v1/keys/${await world.key()}/quota`, { headers: world.auth('/admin/'), body: { add: 1 } }),
  '409 POST /portal/v1/two-factor': async (world) => {
    await enrolTwoFactor(world.server, world.portal, Date.now());
    return enrolAgain(world);
  },
  '429 POST /portal/v1/two-factor': async (world) => {
    await spendAccountFailures(world);
    return enrolAgain(world);
  },
  '409 DELETE /portal/v1/two-factor': async (world) =>
    world.send('DELETE', '/portal/v1/two-factor', { headers: world.portal.headers, body: { current_password: world.portal.password, code: '123456' } }),
  '429 DELETE /portal/v1/two-factor': async (world) => {
    await enrolTwoFactor(world.server, world.portal, Date.now());
    await spendAccountFailures(world);
    return world.send('DELETE', '/portal/v1/two-factor', { headers: world.portal.headers, body: { current_password: world.portal.password, code: '123456' } });
  },
  '409 POST /portal/v1/two-factor/confirm': async (world) => world.send('POST', '/portal/v1/two-factor/confirm', { headers: world.portal.headers, body: { code: '123456' } }),
  '429 POST /portal/v1/two-factor/confirm': async (world) => {
    assert.equal((await enrolAgain(world)).status, 201);
    await spendAccountFailures(world);
    return world.send('POST', '/portal/v1/two-factor/confirm', { headers: world.portal.headers, body: { code: '123456' } });
  },
  '401 POST /portal/v1/session/second-factor': async (world) =>
    world.send('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(world.server), body: { ticket: 'a'.repeat(43), code: '123456' } }),
  '429 POST /portal/v1/session/second-factor': async (world) => {
    await enrolTwoFactor(world.server, world.portal, Date.now());
    const ticket = await passwordStep(world.server, world.portal.email, world.portal.password);
    await spendAccountFailures(world);
    return world.send('POST', '/portal/v1/session/second-factor', { headers: sameOrigin(world.server), body: { ticket, code: '123456' } });
  },
  '429 PUT /portal/v1/me': async (world) => {
    await spendAccountFailures(world);
    return world.send('PUT', '/portal/v1/me', { headers: world.portal.headers, body: { email: 'moved@example.com', current_password: world.portal.password } });
  },
  '429 POST /portal/v1/keys': async (world) => {
    // 50 keys created in a day, revoked as they come (revoking gives no place back).
    for (let index = 0; index < 50; index += 1) await world.send('DELETE', `/portal/v1/keys/${await world.portalKey()}`, { headers: world.portal.headers });
    return world.send('POST', '/portal/v1/keys', { headers: world.portal.headers, body: { name: 'the 51st today' } });
  },
  '429 POST /portal/v1/plan-requests': async (world) => {
    for (let index = 0; index < 10; index += 1) await world.planRequest();
    return world.send('POST', '/portal/v1/plan-requests', { headers: world.portal.headers, body: { key_id: await world.portalKey(), plan: 'business' } });
  },
  '409 DELETE /portal/v1/plan-requests/{id}': async (world) => {
    const id = await world.planRequest();
    assert.equal((await world.send('DELETE', `/portal/v1/plan-requests/${id}`, { headers: world.portal.headers })).status, 200);
    return world.send('DELETE', `/portal/v1/plan-requests/${id}`, { headers: world.portal.headers });
  },
  '409 POST /v1/webhooks/{id}/deliveries/{event_id}/redeliver': async (world) => redeliverPaused(world, '/v1'),
  '409 POST /portal/v1/webhooks/{id}/deliveries/{event_id}/redeliver': async (world) => redeliverPaused(world, '/portal/v1'),
  '409 POST /v1/webhooks/{id}/recover': async (world) => recoverPaused(world, '/v1'),
  '409 POST /portal/v1/webhooks/{id}/recover': async (world) => recoverPaused(world, '/portal/v1'),
  '409 POST /admin/v1/users/{id}/invitations': async (world) => {
    const noEmail = (await world.server.admin('POST', '/admin/v1/users', { name: 'No Email', role: 'member' })).body.data.id;
    return world.server.admin('POST', `/admin/v1/users/${noEmail}/invitations`);
  },
  '409 PUT /portal/v1/listings/{id}': async (world) => {
    const id = await world.portalListing();
    await world.send('DELETE', `/portal/v1/listings/${id}`, { headers: world.portal.headers });
    return world.send('PUT', `/portal/v1/listings/${id}`, { headers: world.portal.headers, body: { price: 2 } });
  },
  '409 DELETE /portal/v1/listings/{id}': async (world) => {
    const id = await world.portalListing();
    await world.server.admin('POST', `/admin/v1/listings/${id}/remove`, { reason: 'spam' });
    return world.send('DELETE', `/portal/v1/listings/${id}`, { headers: world.portal.headers });
  },
  '409 PUT /v1/listings/{id}': async (world) => {
    const id = await world.listing();
    await world.send('DELETE', `/v1/listings/${id}`, { headers: world.auth('/v1/') });
    return world.send('PUT', `/v1/listings/${id}`, { headers: world.auth('/v1/'), body: { price: 2 } });
  },
  '409 PUT /v1/users/me': async (world) => {
    await world.user({ email: 'taken@example.com' });
    return world.send('PUT', '/v1/users/me', { headers: world.auth('/v1/'), body: { email: 'taken@example.com' } });
  },
  '409 POST /admin/v1/users': async (world) => {
    await world.user({ email: 'taken2@example.com' });
    return world.server.admin('POST', '/admin/v1/users', { name: 'N', email: 'TAKEN2@example.com' });
  },
  '409 PATCH /admin/v1/users/{id}': async (world) => {
    await world.user({ email: 'taken3@example.com' });
    return world.server.admin('PATCH', `/admin/v1/users/${await world.user()}`, { email: 'taken3@example.com' });
  },
  '409 PATCH /admin/v1/keys/{id}': async (world) => {
    const id = await world.key();
    await world.server.admin('DELETE', `/admin/v1/keys/${id}`);
    return world.server.admin('PATCH', `/admin/v1/keys/${id}`, { rate_limit: 5 });
  },
  '409 POST /admin/v1/keys/{id}/roll': async (world) => {
    const id = await world.key();
    await world.server.admin('DELETE', `/admin/v1/keys/${id}`);
    return world.server.admin('POST', `/admin/v1/keys/${id}/roll`, {});
  },
  '409 POST /admin/v1/users/{id}/suspend': async (world) => {
    const id = await world.user();
    await world.server.admin('POST', `/admin/v1/users/${id}/suspend`, { reason: 'spam' });
    return world.server.admin('POST', `/admin/v1/users/${id}/suspend`, { reason: 'spam' });
  },
  '409 POST /admin/v1/users/{id}/unsuspend': async (world) => world.server.admin('POST', `/admin/v1/users/${await world.user()}/unsuspend`),
  '409 POST /admin/v1/listings/{id}/remove': async (world) => {
    const id = await world.listing();
    await world.server.admin('POST', `/admin/v1/listings/${id}/remove`, { reason: 'spam' });
    return world.server.admin('POST', `/admin/v1/listings/${id}/remove`, { reason: 'spam' });
  },
  '409 POST /admin/v1/listings/{id}/restore': async (world) => world.server.admin('POST', `/admin/v1/listings/${await world.listing()}/restore`),
  '409 PUT /admin/v1/plans': async (world) => {
    // The creator's portal keys are on the Free plan; a list without it removes a plan in use.
    await world.portalKey();
    return world.server.admin('PUT', '/admin/v1/plans', { plans: [{ id: 'pro', name: 'Pro', rate_limit: 1000, self_service: true }] });
  },
  '409 POST /admin/v1/plan-requests/{id}/approve': async (world) => {
    const id = await world.planRequest();
    await world.server.admin('POST', `/admin/v1/plan-requests/${id}/decline`);
    return world.server.admin('POST', `/admin/v1/plan-requests/${id}/approve`);
  },
  '409 POST /admin/v1/plan-requests/{id}/decline': async (world) => {
    const id = await world.planRequest();
    await world.server.admin('POST', `/admin/v1/plan-requests/${id}/approve`);
    return world.server.admin('POST', `/admin/v1/plan-requests/${id}/decline`);
  },
  '409 PUT /portal/v1/me': async (world) => {
    await world.user({ email: 'taken4@example.com' });
    return world.send('PUT', '/portal/v1/me', { headers: world.portal.headers, body: { email: 'taken4@example.com', current_password: world.portal.password } });
  },
  '409 PATCH /portal/v1/keys/{id}': async (world) => {
    const id = await world.portalKey();
    await world.send('DELETE', `/portal/v1/keys/${id}`, { headers: world.portal.headers });
    return world.send('PATCH', `/portal/v1/keys/${id}`, { headers: world.portal.headers, body: { plan: 'pro' } });
  },
  '409 POST /portal/v1/keys/{id}/roll': async (world) => {
    const id = await world.portalKey();
    await world.send('DELETE', `/portal/v1/keys/${id}`, { headers: world.portal.headers });
    return world.send('POST', `/portal/v1/keys/${id}/roll`, { headers: world.portal.headers, body: {} });
  },
  '409 POST /portal/v1/plan-requests': async (world) => {
    const keyId = await world.portalKey();
    await world.send('POST', '/portal/v1/plan-requests', { headers: world.portal.headers, body: { key_id: keyId, plan: 'business' } });
    return world.send('POST', '/portal/v1/plan-requests', { headers: world.portal.headers, body: { key_id: keyId, plan: 'business' } });
  },
  '409 POST /portal/v1/keys': async (world) => {
    for (let index = 0; index < 20; index += 1) await world.portalKey();
    return world.send('POST', '/portal/v1/keys', { headers: world.portal.headers, body: { name: 'one too many' } });
  },
  '409 POST /portal/v1/webhooks': async (world) => {
    for (let index = 0; index < 20; index += 1) await world.portalWebhook();
    return world.send('POST', '/portal/v1/webhooks', { headers: world.portal.headers, body: { url: 'https://example.com/one-too-many' } });
  },
  '404 POST /portal/v1/signup': async (world) =>
    world.send('POST', '/portal/v1/signup', { headers: sameOrigin(world.server), body: { name: 'Ada', email: 'ada@example.com', password: 'correct horse battery' } }),
  '401 POST /portal/v1/session': async (world) =>
    world.send('POST', '/portal/v1/session', { headers: sameOrigin(world.server), body: { email: world.portal.email, password: 'not the password' } }),
  '401 POST /portal/v1/password': async (world) =>
    world.send('POST', '/portal/v1/password', { headers: sameOrigin(world.server), body: { current_password: world.portal.password, password: 'another correct horse battery' } }),
  '429 POST /portal/v1/password': async (world) => {
    // A wrong current_password counts as a failed sign-in: past 10, even the right one is refused.
    const change = (current: string) => world.send('POST', '/portal/v1/password', { headers: world.portal.headers, body: { current_password: current, password: 'another correct horse battery' } });
    for (let attempt = 0; attempt < 10; attempt += 1) await change('wrong');
    return change(world.portal.password);
  },
  '404 POST /portal/v1/plan-requests': async (world) =>
    world.send('POST', '/portal/v1/plan-requests', { headers: world.portal.headers, body: { key_id: 'key_nothing_here_00000', plan: 'business' } }),
  '409 POST /portal/v1/signup': async (world) =>
    world.send('POST', '/portal/v1/signup', { headers: sameOrigin(world.server), body: { name: 'Ada', email: world.portal.email, password: 'correct horse battery' } }),
  '429 POST /portal/v1/session': async (world) => {
    // 10 failures per account in 15 minutes; the 11th attempt is refused even with the right password.
    for (let attempt = 0; attempt < 10; attempt += 1) {
      await world.send('POST', '/portal/v1/session', { headers: sameOrigin(world.server), body: { email: world.portal.email, password: 'wrong' } });
    }
    return world.send('POST', '/portal/v1/session', { headers: sameOrigin(world.server), body: { email: world.portal.email, password: world.portal.password } });
  },
};

/** 10 wrong passwords for the portal user: the account's failure limit is spent (the next check is 429). */
async function spendAccountFailures(world: World): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    await world.send('POST', '/portal/v1/session', { headers: sameOrigin(world.server), body: { email: world.portal.email, password: 'not the password' } });
  }
}

/** Pauses the webhook (PATCH with enabled: false), answered 200. */
async function pause(world: World, base: '/v1' | '/portal/v1', webhookId: string): Promise<void> {
  const path = `${base}/webhooks/${webhookId}`;
  const paused = await world.send('PATCH', path, { headers: { ...world.auth(path), ...json }, body: { enabled: false } });
  assert.equal(paused.status, 200, paused.text);
}

/** Sends a delivered event again to its webhook once that is paused. */
async function redeliverPaused(world: World, base: '/v1' | '/portal/v1'): Promise<TestResponse> {
  const webhookId = base === '/v1' ? await world.webhook() : await world.portalWebhook();
  const path = `${base}/webhooks/${webhookId}/deliveries/${await world.deliveredEvent(`${base}/webhooks/${webhookId}/`)}/redeliver`;
  await pause(world, base, webhookId);
  return world.send('POST', path, { headers: world.auth(path) });
}

/** Recovers a paused webhook. */
async function recoverPaused(world: World, base: '/v1' | '/portal/v1'): Promise<TestResponse> {
  const webhookId = base === '/v1' ? await world.webhook() : await world.portalWebhook();
  await pause(world, base, webhookId);
  const path = `${base}/webhooks/${webhookId}/recover`;
  return world.send('POST', path, { headers: { ...world.auth(path), ...json }, body: { since: new Date(Date.now() - 60_000).toISOString() } });
}

function enrolAgain(world: World): Promise<TestResponse> {
  return world.send('POST', '/portal/v1/two-factor', { headers: world.portal.headers, body: { current_password: world.portal.password } });
}

/** Documented statuses no test request can provoke on a healthy server, with the reason. */
const NOT_PROVOKED: Array<[pattern: RegExp, reason: string]> = [
  [/^429 POST \/portal\/v1\/webhooks\/\{id\}\/deliveries\/\{event_id\}\/redeliver$/, 'the 61st redelivery in an hour, each waiting for the one before: test/portal/redeliver.test.ts sends the 70'],
  [/^429 POST \/portal\/v1\/webhooks\/\{id\}\/recover$/, 'the 61st redelivery in an hour, as above: test/webhooks/run.test.ts spends an hour\'s turns through /v1'],
  [/^503 /, 'needs a store that cannot write, an unreachable shared rate limiter or a lagging instance; test/store/disk-faults-http.test.ts provokes the store one with disk faults'],
  [/^4XX /, 'a refusal by Node\'s HTTP parser (bad framing, headers too large); the 400 case shows these routes answer 4xx with an Error'],
  [/^409 POST \/v1\/(listings|webhooks|webhooks\/\{id\}\/rotate-secret)$/, 'only while a request with the same Idempotency-Key is still running, a race with the first request that no request from outside can order'],
  [/^409 POST \/portal\/v1\/password$/, 'the password changed between reading the invitation and saving: a race'],
  [/^423 (DELETE \/portal\/v1\/two-factor|POST \/portal\/v1\/two-factor\/recovery-codes|POST \/portal\/v1\/session\/second-factor|PUT \/portal\/v1\/me)$/, 'codes locked after 30 wrong ones in 24 hours, each a real sign-in step: test/portal/two-factor-holds.test.ts sends the 30'],
  [/^(409|429) POST \/portal\/v1\/two-factor\/recovery-codes$/, 'a right app code (the example\'s cannot be), or ten wrong ones first: test/portal/two-factor-holds.test.ts makes new codes with real ones'],
  [/^409 POST \/portal\/v1\/webhooks\/\{id\}\/test$/, 'needs a webhook switched off by its receiver answering 410 to a delivery, which takes a receiver and a delivery round'],
];

test('every documented error status is provoked and answers as documented', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const operations = await documentedOperations(server);
  const unaccounted: string[] = [];
  const usedExcuses = new Set<RegExp>();
  for (const operation of operations) {
    for (const status of operation.statuses) {
      const label = `${status} ${operation.method} ${operation.path}`;
      const provoke = SPECIFIC[label] ?? GENERAL[status]?.(operation);
      if (provoke === undefined) {
        const excuse = NOT_PROVOKED.find(([pattern]) => pattern.test(label));
        if (excuse) usedExcuses.add(excuse[0]);
        else unaccounted.push(label);
        continue;
      }
      await t.test(label, async (t) => {
        // A server per case: rate limits, plan lists and failed sign-ins must not leak between cases.
        // Sign-up exists only when the operator opened it; its 404 is the answer when closed.
        const signUpOpen = operation.path === '/portal/v1/signup' && status !== '404';
        const world = new World(await startServer(t, { dataDir: null, env: envFor(operation.path, signUpOpen) }));
        await world.setUp(operation.path, t);
        const answer = await provoke(world, operation);
        assert.equal(answer.status, Number(status), `${label}: answered ${answer.status} ${answer.text.slice(0, 300)}`);
        assert.equal(typeof answer.body?.error, 'string', `${label}: an Error body`);
      });
    }
  }
  assert.deepEqual(unaccounted, [], 'documented error statuses neither provoked nor listed as unprovokable');
  // An excuse nothing needs any more (the status was dropped or got a case) must go too.
  assert.deepEqual(NOT_PROVOKED.filter(([pattern]) => !usedExcuses.has(pattern)).map(([pattern]) => String(pattern)), [], 'unused entries in NOT_PROVOKED');
  assert.deepEqual(Object.keys(SPECIFIC).filter((label) => !operations.some((operation) => operation.statuses.some((status) => `${status} ${operation.method} ${operation.path}` === label))), [], 'cases for statuses the document does not list');
});
