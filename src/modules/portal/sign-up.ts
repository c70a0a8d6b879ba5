// An open sign-up's body (PORTAL_SIGNUP=open): the profile rules of src/resources/profile.ts
// plus a password the portal's rules accept.

import { readProfileFields, type UserFields } from '../../resources/profile.ts';
import { BodyChecker } from '../../http/validation.ts';
import { passwordProblem } from './password-rules.ts';

/** An open sign-up's body: a name, an email (never empty) and a password the rules accept, always a member; throws one 400 naming every problem. */
export function readSignUp(body: Record<string, unknown>): UserFields & { password: string } {
  const checker = new BodyChecker(body, ['name', 'email', 'password']);
  checker.requireFields(['name', 'email', 'password']);
  const profile = readProfileFields(checker);
  if (profile.email === '') checker.fail('email', 'must not be empty');
  const problem = checker.has('password') ? passwordProblem(checker.value('password')) : null;
  if (problem !== null) checker.fail('password', problem);
  checker.finish();
  return { profile, role: 'member', password: body.password as string };
}
