// Two-factor sign-in for tests: codes come from the independent `otpauth` package (never from
// the server's own TOTP code), so a test passing means the server agrees with another
// implementation of RFC 6238.
// @example
//   const factor = await enrolTwoFactor(server, ada, clock.now());
//   const ticket = await passwordStep(server, ada.email, ada.password);

import * as OTPAuth from 'otpauth';
import type { PortalUser } from './portal.ts';
import { sameOrigin } from './portal.ts';
import type { TestServer } from './server.ts';

export interface EnrolledFactor {
  secret: string;
  recoveryCodes: string[];
}

/** The 6-digit code for `secret` (base32) at `atMs`, by the otpauth package. */
export function codeAt(secret: string, atMs: number): string {
  return OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: atMs });
}

/** Enrols and confirms two-factor sign-in for a signed-in user, with a code for `atMs` (the server's clock). */
export async function enrolTwoFactor(server: TestServer, user: PortalUser, atMs: number): Promise<EnrolledFactor> {
  const enrolled = await server.request('POST', '/portal/v1/two-factor', { headers: user.headers, body: { current_password: user.password } });
  if (enrolled.status !== 201) throw new Error(`enrolling failed: ${enrolled.status} ${enrolled.text}`);
  const secret = enrolled.body.data.secret as string;
  const confirmed = await server.request('POST', '/portal/v1/two-factor/confirm', { headers: user.headers, body: { code: codeAt(secret, atMs) } });
  if (confirmed.status !== 200) throw new Error(`confirming failed: ${confirmed.status} ${confirmed.text}`);
  return { secret, recoveryCodes: confirmed.body.data.recovery_codes };
}

/** The password step of signing in with two-factor sign-in on: the ticket of the 202 (throws otherwise). */
export async function passwordStep(server: TestServer, email: string, password: string): Promise<string> {
  const response = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email, password } });
  if (response.status !== 202) throw new Error(`expected 202 with a ticket: ${response.status} ${response.text}`);
  return response.body.data.ticket as string;
}
