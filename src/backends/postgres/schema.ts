// The PostgreSQL tables of the record log, created and migrated at start under an advisory lock
// (so instances starting together do not race), with the schema version in a table of its own.
//
//   marketplace_meta     one row: the schema version and the version of the last committed write
//   marketplace_records  every record's latest state and the version of the write that put it;
//                        a removed record stays as a tombstone (data NULL) so other instances
//                        learn of the removal; the version order is the change feed they follow
//
// marketplace_append(expected, entries) commits one batch of writes in one round trip. It locks
// the meta row, and commits only when no write was committed since `expected` — the last write
// this instance knows of — so every write of the batch was decided on the current state of
// every record (contract of src/store/log.ts: the versions read are still current). Otherwise it
// returns NULL and the instance catches up and decides again. Versions are given under that
// lock, so they increase in commit order with no gaps and a follower never skips one.

import type { ClientBase } from 'pg';

export const SCHEMA_VERSION = 1;
export const CHANGES_CHANNEL = 'marketplace_changes';
const SCHEMA_LOCK = 'SELECT pg_advisory_xact_lock(727274001)';

const MIGRATIONS: readonly string[] = [
  // 0 → 1
  `
  CREATE TABLE marketplace_records (
    collection text NOT NULL,
    id text NOT NULL,
    version bigint NOT NULL,
    data json,
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection, id)
  );
  CREATE INDEX marketplace_records_by_version ON marketplace_records (version);
  INSERT INTO marketplace_meta (id, schema_version, last_version, tombstones_dropped_through) VALUES (1, 0, 1, 1);
  CREATE FUNCTION marketplace_append(expected bigint, entries json) RETURNS bigint LANGUAGE plpgsql AS $fn$
  DECLARE
    current bigint;
    entry json;
    op json;
    written bigint;
  BEGIN
    SELECT last_version INTO current FROM marketplace_meta WHERE id = 1 FOR UPDATE;
    IF current <> expected THEN RETURN NULL; END IF;
    written := current;
    FOR entry IN SELECT value FROM json_array_elements(entries) LOOP
      written := written + 1;
      FOR op IN SELECT value FROM json_array_elements(entry) LOOP
        INSERT INTO marketplace_records AS r (collection, id, version, data)
        VALUES (op->>'c', op->>'id', written, CASE WHEN op->>'op' = 'put' THEN op->'d' END)
        ON CONFLICT (collection, id) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data, changed_at = now();
      END LOOP;
    END LOOP;
    UPDATE marketplace_meta SET last_version = written WHERE id = 1;
    PERFORM pg_notify('${CHANGES_CHANNEL}', written::text);
    RETURN written;
  END
  $fn$;
  `,
];

/** The database holds a schema newer than this release: nothing may change it. */
export class SchemaVersionError extends Error {}

/** Creates or migrates the tables; throws SchemaVersionError for a newer schema. */
export async function migrate(client: ClientBase): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(SCHEMA_LOCK);
    await client.query(
      'CREATE TABLE IF NOT EXISTS marketplace_meta (id int PRIMARY KEY CHECK (id = 1), schema_version int NOT NULL, last_version bigint NOT NULL, tombstones_dropped_through bigint NOT NULL)',
    );
    const found = await client.query<{ schema_version: number }>('SELECT schema_version FROM marketplace_meta WHERE id = 1');
    const current = found.rows[0]?.schema_version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new SchemaVersionError(
        `The database holds marketplace schema version ${current}, newer than this release understands (${SCHEMA_VERSION}). ` +
          'Run that release (or a later one); the database was left unchanged.',
      );
    }
    for (let version = current; version < SCHEMA_VERSION; version += 1) await client.query(MIGRATIONS[version]!);
    await client.query('UPDATE marketplace_meta SET schema_version = $1 WHERE id = 1', [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
