// The check in front of every /admin/v1 route: the request must carry the operator token as
// "Authorization: Bearer <token>". Where the token comes from is src/auth/operator-token-source.ts.

import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../domain/errors.ts';

export class OperatorTokenCheck {
  private readonly expectedDigest: Buffer;

  constructor(token: string) {
    this.expectedDigest = sha256(token);
  }

  /** True when the Authorization header carries the operator token. */
  matches(authorization: string | undefined): boolean {
    if (!authorization) return false;
    const bearer = /^bearer\s+(.+)$/i.exec(authorization.trim());
    if (!bearer) return false;
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    return timingSafeEqual(sha256(bearer[1]!.trim()), this.expectedDigest);
  }
}

/** The 401 for a missing or wrong operator token. */
export function operatorTokenRequired(): HttpError {
  return new HttpError(401, 'The operator token is missing or wrong.', {
    hint: 'Send "Authorization: Bearer <operator token>" (MARKETPLACE_ADMIN_TOKEN, or the admin-token file in DATA_DIR).',
  });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
