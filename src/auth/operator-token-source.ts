// Where the operator token comes from: MARKETPLACE_ADMIN_TOKEN, else DATA_DIR/admin-token
// (made on first start with mode 0600), else — with DATA_DIR=:memory: — a fresh token that
// main prints, since there is nowhere to keep it.

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The file keeps the name operators already know (and scripts read). */
export const OPERATOR_TOKEN_FILE_NAME = 'admin-token';

export interface ResolvedOperatorToken {
  token: string;
  /** The file holding it, when it lives in the data dir. */
  file: string | null;
  /** True when this start made it (so main tells the operator where it is). */
  created: boolean;
}

export function resolveOperatorToken(configured: string | null, dataDir: string | null): ResolvedOperatorToken {
  if (configured !== null) return { token: configured, file: null, created: false };
  const token = `adm_${randomBytes(24).toString('base64url')}`;
  if (dataDir === null) return { token, file: null, created: true };
  const file = join(dataDir, OPERATOR_TOKEN_FILE_NAME);
  try {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored !== '') return { token: stored, file, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const descriptor = openSync(file, 'w', 0o600);
  try {
    writeSync(descriptor, `${token}\n`);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  return { token, file, created: true };
}
