// A private certificate authority and a server certificate signed by it, made with `openssl`
// for one test file: the server (Redis, PostgreSQL) gets the certificate and key, the client
// gets the authority's certificate to check it by. Valid for 127.0.0.1 and localhost.

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  dir: string;
  /** The authority's certificate (PEM): what clients trust. */
  caFile: string;
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** True when the openssl command is installed. */
export function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version']).status === 0;
}

export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-tls-'));
  const file = (name: string) => join(dir, name);
  const run = (args: string[]) => {
    const result = spawnSync('openssl', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=marketplace test CA', '-keyout', file('ca.key'), '-out', file('ca.crt')]);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', file('server.key'), '-out', file('server.csr')]);
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('server.ext'), '-out', file('server.crt')]);
  // Readable by the servers' unprivileged account (test/helpers/services.ts); PostgreSQL gets its own 0600 copy.
  chmodSync(file('server.key'), 0o644);
  chmodSync(dir, 0o755);
  return { dir, caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
