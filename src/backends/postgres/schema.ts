// The PostgreSQL tables of the record log, created and migrated at start under an advisory lock
// (so instances starting together do not race), with the schema version in a table of its own.
//
//   marketplace_meta      one row: the schema version, and a random id naming this store (its
//                         commit watermark's key in Redis)
//   marketplace_log_slots one row per writing instance (a slot it alone writes): the sequence of
//                         its last committed write, and through which of its sequences removals
//                         were dropped by a compaction
//   marketplace_records   every record's latest state, the slot and sequence of the write that
//                         put it; a removed record stays as a tombstone (data NULL) so other
//                         instances learn of the removal
//   marketplace_instances one row per running instance and when it last said it runs (once a
//                         second), so `marketplace migrate` refuses a database in use
//
// marketplace_commit(writer, expected, entries, reads, locks) commits one batch of one
// instance's writes in one round trip, with no lock shared by every commit (so the instances'
// commits overlap and PostgreSQL flushes them together). `expected` is what the instance has in
// memory, per slot, which is what it decided the batch on. The function first takes the batch's
// advisory locks in the order given (ascending, the same order in every commit, so two commits
// never wait for each other in a circle): a record written exclusive, a record read shared, a
// collection shared by whoever touches one of its records and exclusive by whoever read it whole
// (a uniqueness check) — so of two commits that read or write the same thing, the later one sees
// the earlier one's rows. Then each entry's reads are checked (contract of src/store/log.ts): a
// record read is stale when a row of it has a sequence past `expected` for its slot, a whole
// collection when any of its rows has. Entries with stale reads are answered null and store
// nothing; the others get the next sequences of the writer's slot, which only this instance
// writes, one commit after the other: a slot's sequences have no gaps, and a reader that sees
// sequence n of a slot sees every earlier one. No notification is sent from the commit: the
// other instances learn of it by the commit watermark (src/backends/redis/redis-watermark.ts).
//
// Ordered records (src/store/log.ts, point 8: a user's logged events) get their `seq` here, in
// the commit: the committing transaction's id times ORDER_SPAN, plus their place among the
// batch's ordered records. Transaction ids are given out in increasing order, so a write
// decided after another was acknowledged gets a higher one, and every instance holds the same
// number. Ids are not given in commit order, so a reader serves only below the oldest
// transaction still running when it last read the table (postgres-log.ts, "Ordered records").

import type { ClientBase } from 'pg';

export const SCHEMA_VERSION = 6;
/** Ordered records one commit may stamp: their `seq` is the transaction's id × ORDER_SPAN + their place. */
export const ORDER_SPAN = 65_536;
/** The notification channels of schemas 1–4 (their functions still name them). */
const CHANGES_CHANNEL = 'marketplace_changes';
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
  // 4 → 5: each instance writes a slot of its own, and commits take locks only on what they
  // read and write; the global version, its lock on the meta row and the per-commit
  // notification are gone (writes of several instances overlap). Rows of earlier schemas keep
  // their version as the sequence of the slot "before-5".
  `
  CREATE TABLE marketplace_log_slots (
    id text PRIMARY KEY,
    last_seq bigint NOT NULL,
    dropped_through bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  INSERT INTO marketplace_log_slots (id, last_seq, dropped_through)
    SELECT 'before-5', last_version, tombstones_dropped_through FROM marketplace_meta WHERE id = 1;
  ALTER TABLE marketplace_records ADD COLUMN slot text NOT NULL DEFAULT 'before-5', ADD COLUMN seq bigint;
  UPDATE marketplace_records SET seq = version;
  ALTER TABLE marketplace_records ALTER COLUMN seq SET NOT NULL, ALTER COLUMN slot DROP DEFAULT;
  DROP INDEX marketplace_records_by_version;
  ALTER TABLE marketplace_records DROP COLUMN version;
  CREATE INDEX marketplace_records_by_slot ON marketplace_records (slot, seq);
  CREATE INDEX marketplace_records_by_collection ON marketplace_records (collection, slot, seq);
  ALTER TABLE marketplace_meta DROP COLUMN last_version, DROP COLUMN tombstones_dropped_through;
  -- Names this store's commit watermark in Redis, which other stores may share.
  ALTER TABLE marketplace_meta ADD COLUMN store_id text NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text);
  DROP FUNCTION marketplace_append(bigint, json, json);
  DROP TABLE marketplace_instances;
  CREATE TABLE marketplace_instances (id text PRIMARY KEY, beat_at timestamptz NOT NULL);
  -- marketplace_commit, the one function of commits from here on, is made by the next step.
  `,
  // 5 → 6: ordered records (a user's logged events) get their `seq` in the commit, the same on
  // every instance (until now each instance numbered its own, so two could give one number).
  // This step also makes the function for a database coming from an earlier schema (step 5 no
  // longer does: every step runs in the one transaction of migrate()); one step 5 made is replaced.
  `
  CREATE OR REPLACE FUNCTION marketplace_commit(writer text, expected jsonb, entries json, reads json, lock_keys bigint[], lock_exclusive boolean[])
    RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE
    i int;
    entry_reads json;
    one_read json;
    stale boolean;
    fell_behind boolean;
    accepted boolean[] := ARRAY[]::boolean[];
    entry json;
    op json;
    entry_number int := 0;
    last bigint;
    written bigint;
    seqs jsonb := '[]'::jsonb;
    order_base bigint;
    ordered int := 0;
    stored json;
  BEGIN
    FOR i IN 1 .. coalesce(array_length(lock_keys, 1), 0) LOOP
      IF lock_exclusive[i] THEN PERFORM pg_advisory_xact_lock(lock_keys[i]);
      ELSE PERFORM pg_advisory_xact_lock_shared(lock_keys[i]);
      END IF;
    END LOOP;
    -- A removal this instance never saw may be gone from the table: nothing it read can be trusted.
    fell_behind := EXISTS (SELECT 1 FROM marketplace_log_slots s WHERE s.dropped_through > coalesce((expected->>s.id)::bigint, 0));
    -- Every entry is judged before any is stored: the entries of a batch never read each other's writes.
    FOR entry_reads IN SELECT value FROM json_array_elements(reads) LOOP
      stale := fell_behind;
      IF NOT stale THEN
        FOR one_read IN SELECT value FROM json_array_elements(entry_reads) LOOP
          IF one_read->>'id' IS NULL THEN
            stale := EXISTS (
              SELECT 1 FROM marketplace_log_slots s
               WHERE s.last_seq > coalesce((expected->>s.id)::bigint, 0)
                 AND EXISTS (SELECT 1 FROM marketplace_records r
                              WHERE r.collection = one_read->>'c' AND r.slot = s.id AND r.seq > coalesce((expected->>s.id)::bigint, 0)));
          ELSE
            -- A slot the instance does not know is new to it, unless it is gone (forgotten an
            -- hour after its instance stopped, long after every instance applied its writes).
            stale := EXISTS (SELECT 1 FROM marketplace_records r
                              WHERE r.collection = one_read->>'c' AND r.id = one_read->>'id'
                                AND CASE WHEN expected ? r.slot THEN r.seq > (expected->>r.slot)::bigint
                                         ELSE EXISTS (SELECT 1 FROM marketplace_log_slots s WHERE s.id = r.slot) END);
          END IF;
          EXIT WHEN stale;
        END LOOP;
      END IF;
      accepted := accepted || NOT stale;
    END LOOP;
    SELECT last_seq INTO last FROM marketplace_log_slots WHERE id = writer FOR UPDATE;
    IF last IS NULL THEN RAISE EXCEPTION 'marketplace: no log slot %', writer; END IF;
    IF last <> coalesce((expected->>writer)::bigint, 0) THEN
      RAISE EXCEPTION 'marketplace: log slot % is at %, its instance expected %', writer, last, expected->>writer;
    END IF;
    written := last;
    FOR entry IN SELECT value FROM json_array_elements(entries) LOOP
      entry_number := entry_number + 1;
      IF accepted[entry_number] THEN
        written := written + 1;
        FOR op IN SELECT value FROM json_array_elements(entry) LOOP
          stored := CASE WHEN op->>'op' = 'put' THEN op->'d' END;
          IF op->>'o' IS NOT NULL THEN
            IF ordered >= ${ORDER_SPAN} THEN RAISE EXCEPTION 'marketplace: more than % ordered records in one commit', ${ORDER_SPAN}; END IF;
            order_base := coalesce(order_base, pg_current_xact_id()::text::bigint * ${ORDER_SPAN});
            stored := jsonb_set(stored::jsonb, '{seq}', to_jsonb(order_base + ordered))::json;
            ordered := ordered + 1;
          END IF;
          INSERT INTO marketplace_records AS r (collection, id, slot, seq, data)
          VALUES (op->>'c', op->>'id', writer, written, stored)
          ON CONFLICT (collection, id) DO UPDATE SET slot = EXCLUDED.slot, seq = EXCLUDED.seq, data = EXCLUDED.data, changed_at = now();
        END LOOP;
        seqs := seqs || to_jsonb(written);
      ELSE
        seqs := seqs || 'null'::jsonb;
      END IF;
    END LOOP;
    IF written > last THEN UPDATE marketplace_log_slots SET last_seq = written WHERE id = writer; END IF;
    RETURN json_build_object('seqs', seqs, 'order_base', order_base);
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
    for (let version = current; version < SCHEMA_VERSION; version += 1) await client.query(SCHEMA_MIGRATIONS[version]!);
    await client.query('UPDATE marketplace_meta SET schema_version = $1 WHERE id = 1', [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
