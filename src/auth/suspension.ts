// The suspension step of the /v1 pipeline, right after the key and rate-limit checks: a
// suspended user's keys are refused with 403 on every route, known or not.

import { userStatus, type UserRecord } from '../domain/records.ts';
import { forbidden } from '../domain/errors.ts';

export function assertNotSuspended(user: UserRecord): void {
  if (userStatus(user) === 'suspended') {
    throw forbidden('This account is suspended: its keys may not be used. Contact the marketplace operator.');
  }
}
