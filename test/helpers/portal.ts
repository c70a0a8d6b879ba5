// Portal users for tests: a user made through the operator API, given a password through an
// invitation (which signs in), with the headers a portal request from the portal's own page
// carries (the session cookie and an Origin equal to the server's).
// @example
//   const ada = await signedInUser(server, { role: 'creator' });
//   await server.request('GET', '/portal/v1/me', { headers: ada.headers });

import type { TestResponse, TestServer } from './server.ts';

export interface PortalUser {
  userId: string;
  email: string;
  password: string;
  /** "marketplace_session=<value>", as a Cookie header sends it. */
  cookie: string;
  /** Cookie and Origin: what a portal page's request carries. */
  headers: Record<string, string>;
}

let made = 0;

/** The Origin header of a page served by this server. */
export function sameOrigin(server: TestServer): Record<string, string> {
  return { origin: server.url };
}

/** "name=value" of the Set-Cookie header of an answer, or null when it sets none. */
export function cookieFrom(response: TestResponse): string | null {
  const header = response.headers.get('set-cookie');
  if (header === null) return null;
  return header.split(';', 1)[0]!.trim();
}

/** Gives `userId` this password the way a user does: through an invitation link. */
export async function setPassword(server: TestServer, userId: string, password: string): Promise<TestResponse> {
  const invitation = await server.admin('POST', `/admin/v1/users/${userId}/invitations`);
  if (invitation.status !== 201) throw new Error(`inviting failed: ${invitation.status} ${invitation.text}`);
  const response = await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: invitation.body.data.token, password } });
  if (response.status !== 201) throw new Error(`setting a password failed: ${response.status} ${response.text}`);
  return response;
}

/** Signs in; throws unless 201. */
export async function signIn(server: TestServer, email: string, password: string): Promise<{ cookie: string; headers: Record<string, string> }> {
  const response = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email, password } });
  const cookie = cookieFrom(response);
  if (response.status !== 201 || cookie === null) throw new Error(`signing in failed: ${response.status} ${response.text}`);
  return { cookie, headers: { cookie, ...sameOrigin(server) } };
}

/** A new user (member unless said otherwise) with a password, signed in. */
export async function signedInUser(server: TestServer, fields: { role?: 'creator' | 'member'; name?: string; email?: string; password?: string } = {}): Promise<PortalUser> {
  made += 1;
  const email = fields.email ?? `portal-user-${process.pid}-${made}@example.com`;
  const password = fields.password ?? `correct horse battery staple ${made}`;
  const user = await server.createUser({ role: fields.role ?? 'member', name: fields.name ?? `Portal user ${made}`, email });
  // Setting a password from an invitation signs in: that session is the user's only one.
  const cookie = cookieFrom(await setPassword(server, user.id, password))!;
  return { userId: user.id, email, password, cookie, headers: { cookie, ...sameOrigin(server) } };
}
