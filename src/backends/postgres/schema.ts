// The PostgreSQL tables of the record log, created and migrated at start under an advisory lock
// (so instances starting together do not race), with the schema version in a table of its own.
//
//   marketplace_meta     one row: the schema version and the version of the last committed write
//   marketplace_records  every record's latest state and the version of the write that put it;
//                        a removed record stays as a tombstone (data NULL) so other instances
//                        learn of the removal; the version order is the change feed they follow
//   marketplace_instances one row per running instance: the version it has applied, when it last
//                        said so, and whether it lapsed (a writer stopped waiting for it)
//
// marketplace_append(expected, entries, reads) commits one batch of writes in one round trip.
// `expected` is the last write this instance has in memory, which is what it decided the batch
// on. The function locks the meta row, then checks each entry's reads (contract of
// src/store/log.ts): a record read is stale when a write since `expected` changed it, a whole
// collection read when a write since `expected` changed any of its records. Entries with stale
// reads are answered null and store nothing; the others commit. When no write was committed
// since `expected` there is nothing to check. Versions are given under that lock, so they
// increase in commit order with no gaps and a follower never skips one. The answer also gives
// the last version before the batch: when it is not `expected`, others wrote in between, and the
// instance reads their writes before it decides anything else.

import type { ClientBase } from 'pg';

export const SCHEMA_VERSION = 4;
export const CHANGES_CHANNEL = 'marketplace_changes';
/** Each instance announces here, as "<instance id> <version>", how far it has applied the log. */
export const APPLIED_CHANNEL = 'marketplace_applied';
const SCHEMA_LOCK = 'SELECT pg_advisory_xact_lock(727274001)';

export const SCHEMA_MIGRATIONS: readonly string[] = [
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
  // 1 → 2: each entry's reads are checked, so writes of instances that touch different
  // records no longer refuse each other (the first version refused every write made since).
  `
  DROP FUNCTION marketplace_append(bigint, json);
  CREATE FUNCTION marketplace_append(expected bigint, entries json, reads json) RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE
    current bigint;
    dropped_through bigint;
    entry_reads json;
    one_read json;
    stale boolean;
    accepted boolean[] := ARRAY[]::boolean[];
    entry json;
    op json;
    entry_number int := 0;
    written bigint;
    versions jsonb := '[]'::jsonb;
  BEGIN
    SELECT last_version, tombstones_dropped_through INTO current, dropped_through FROM marketplace_meta WHERE id = 1 FOR UPDATE;
    -- Every entry is judged before any is stored: the entries of a batch never read each other's writes.
    FOR entry_reads IN SELECT value FROM json_array_elements(reads) LOOP
      IF current = expected THEN
        stale := false;
      ELSIF dropped_through > expected THEN
        -- A removal this instance never saw may be gone from the table: nothing it read can be trusted.
        stale := true;
      ELSE
        stale := false;
        FOR one_read IN SELECT value FROM json_array_elements(entry_reads) LOOP
          IF one_read->>'id' IS NULL THEN
            stale := EXISTS (SELECT 1 FROM marketplace_records WHERE version > expected AND collection = one_read->>'c');
          ELSE
            stale := EXISTS (SELECT 1 FROM marketplace_records WHERE collection = one_read->>'c' AND id = one_read->>'id' AND version > expected);
          END IF;
          EXIT WHEN stale;
        END LOOP;
      END IF;
      accepted := accepted || NOT stale;
    END LOOP;
    written := current;
    FOR entry IN SELECT value FROM json_array_elements(entries) LOOP
      entry_number := entry_number + 1;
      IF accepted[entry_number] THEN
        written := written + 1;
        FOR op IN SELECT value FROM json_array_elements(entry) LOOP
          INSERT INTO marketplace_records AS r (collection, id, version, data)
          VALUES (op->>'c', op->>'id', written, CASE WHEN op->>'op' = 'put' THEN op->'d' END)
          ON CONFLICT (collection, id) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data, changed_at = now();
        END LOOP;
        versions := versions || to_jsonb(written);
      ELSE
        versions := versions || 'null'::jsonb;
      END IF;
    END LOOP;
    IF written > current THEN
      UPDATE marketplace_meta SET last_version = written WHERE id = 1;
      PERFORM pg_notify('${CHANGES_CHANNEL}', written::text);
    END IF;
    RETURN json_build_object('previous', current, 'versions', versions);
  END
  $fn$;
  `,
  // 2 → 3: every running instance says how far it has applied the log, so a write is
  // acknowledged only once every instance answers with it (postgres-log.ts, "Read-your-writes").
  `
  CREATE TABLE marketplace_instances (
    id text PRIMARY KEY,
    applied bigint NOT NULL,
    beat_at timestamptz NOT NULL,
    lapsed boolean NOT NULL
  );
  `,
  // 3 → 4: each instance names how long writers wait for it once it stops reporting (its lapse,
  // from its INSTANCE_LEASE_MS), so instances configured differently still keep the promise.
  // Rows of instances of an older release keep the 2 s they were started with.
  `
  ALTER TABLE marketplace_instances ADD COLUMN lapse_ms integer NOT NULL DEFAULT 2000;
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
    for (let version = current; version < SCHEMA_VERSION; version += 1) await client.query(SCHEMA_MIGRATIONS[version]!);
    await client.query('UPDATE marketplace_meta SET schema_version = $1 WHERE id = 1', [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
