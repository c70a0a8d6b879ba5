// The record log in PostgreSQL (contracts: src/store/log.ts, and src/store/instance-sync.ts for
// following the other instances; tables: schema.ts), shared by any number of instances. Each
// instance keeps every record in memory, as with the file, and follows the others.
//
// Slots. Each instance writes its own slot of the log (a row of marketplace_log_slots, made at
// start under a new id): its writes get that slot's next sequences, one commit after the other,
// so a slot has no gaps and needs no lock shared with the other instances. What an instance has
// in memory is therefore a vector, the last sequence it applied of each slot (`applied`); its
// commits are checked against that vector (marketplace_commit), and `pull` reads, in one
// statement (one snapshot), every row whose sequence is past it, with each slot's last sequence.
// The store's versions are this instance's own count of the writes it applied, in the order it
// applied them: no other instance sees them (reads are checked by slot and sequence).
//
// Read-your-writes. After a commit the writer raises its slot in the commit watermark (Redis,
// src/backends/redis/redis-watermark.ts) and then the store answers. Each request learns the
// watermark and, when this instance has applied less, catches up first (the store's
// `ensureFresh`). Nothing here waits for other instances, and no instance reports each write.
// A periodic catch-up (every half second) keeps an idle instance near the others, so webhook
// deliveries and event streams follow the others' writes without a request.
//
// Ordered records. The commit gives each ordered record (src/store/log.ts, point 8) its `seq`
// from the committing transaction's id (schema.ts), and `append` copies the same numbers into
// the records this instance applies. Transaction ids are given out in increasing order but
// commit in any order, so one with a lower id may still be running when a higher one is read:
// the order is settled only below the oldest transaction running when this instance last read
// the table (`orderedBelow`, from the snapshot of the last pull or of the load). A transaction
// left open on the same PostgreSQL delays those readers (never reorders them) until it ends.
//
// Outages. A PostgreSQL outage rejects commits (the store answers 503) while reads that find the
// instance caught up go on from memory; one that finds it behind cannot catch up and answers
// 503. Without Redis the watermark is read from PostgreSQL (every slot's last sequence), which
// is never below it: the operator's requests still see every acknowledged write.
//
// The driver (`pg`) is an optional peer dependency, imported only when DATABASE_URL is set.

import { randomUUID } from 'node:crypto';
import type { ClientBase, Pool } from 'pg';
import type { StoredRecord, WriteOp } from '../../store/format.ts';
import type { InstanceSync, PulledWrite, Watermark } from '../../store/instance-sync.ts';
import type { AppendOutcome, CompactResult, LiveCompactionSource, LoadSink, Log, LogEntry, LogStats } from '../../store/log.ts';
import { commitLocks } from './commit-locks.ts';
import { RemovalCount } from './removals.ts';
import { migrate, ORDER_SPAN } from './schema.ts';

/** followers(): an instance that said it runs within this long is running (each says so every 2 seconds). */
const RUNNING_INSTANCE_REPORTED_WITHIN_MS = 5_000;
/** How often a running instance says so in marketplace_instances (one write per interval, whatever the write rate). */
const HEARTBEAT_MS = 2_000;
/** Gone instances' slots are looked for at start and every 10 minutes. */
const BEATS_BETWEEN_SLOT_SWEEPS = 300;

export interface PostgresLogOptions {
  url: string;
  warn: (message: string) => void;
  /** Tombstones (removed records) older than this are dropped at compaction. */
  tombstoneRetentionMs?: number;
  /** False: do not follow other instances' writes (a one-off tool such as `migrate`). Default true. */
  follow?: boolean;
}

/** Where the commit watermark is kept (Redis): raised after each commit, read by every request. */
export interface WatermarkBoard {
  raise(slot: string, seq: number): Promise<void>;
  /** Drops the fields of slots removed from the database. */
  forget(slots: readonly string[]): Promise<void>;
  read(): Promise<Watermark>;
  trusted(): boolean;
}

/** `fillEmpty` found records (or writes) in the database: nothing was written. */
export class DatabaseNotEmptyError extends Error {}

interface RecordRow {
  collection: string;
  id: string;
  slot: string;
  seq: string;
  data: { id: string } | null;
}

/** A catch-up at least this often, whatever the requests do. */
const CATCH_UP_MS = 500;
/** Dead peers and half-open connections are noticed by the kernel too. */
const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 5_000 };
/** The oldest transaction running now: every ordered record of an older one is committed (or never will be). */
const RUNNING_FROM_SQL = 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS running_from';
/**
 * Everything committed past `applied` ($1, slot → sequence) by others than this instance ($2),
 * in one snapshot: one row per slot that moved (its last sequence and what compaction dropped),
 * joined with its changed rows, in sequence order.
 */
const PULL_SQL = `SELECT x.running_from, p.* FROM (${RUNNING_FROM_SQL}) x
   LEFT JOIN (SELECT s.id AS slot_id, s.last_seq, s.dropped_through, r.collection, r.id, r.seq, r.data
                FROM marketplace_log_slots s
                LEFT JOIN marketplace_records r ON r.slot = s.id AND r.seq > coalesce(($1::jsonb->>s.id)::bigint, 0)
               WHERE s.id <> $2 AND (s.last_seq > coalesce(($1::jsonb->>s.id)::bigint, 0) OR s.dropped_through > coalesce(($1::jsonb->>s.id)::bigint, 0))) p ON true
  ORDER BY p.slot_id, p.seq`;
const COMMIT_SQL = 'SELECT marketplace_commit($1, $2, $3, $4, $5, $6) AS outcome';
/** One compaction at a time across instances (session lock, held on one pooled connection). */
const COMPACTION_LOCK = 'SELECT pg_advisory_lock(727274002)';
const COMPACTION_UNLOCK = 'SELECT pg_advisory_unlock(727274002)';
/** Records per INSERT when filling an empty database (keeps each statement's JSON a few MB). */
const FILL_ROWS_PER_STATEMENT = 2_000;
const DEFAULT_TOMBSTONE_RETENTION_MS = 10 * 60 * 1000;

export class PostgresLog implements Log, InstanceSync {
  /** This instance's slot of the log (and its row in marketplace_instances). */
  readonly slot = randomUUID();
  /** The store's random id (marketplace_meta), which names its commit watermark in Redis. */
  storeId = '';
  private readonly pool: Pool;
  private readonly tombstoneRetentionMs: number;
  /** Ordered records with a lower `seq` are all in memory (point 6 of instance-sync.ts). */
  private settledOrder = 0;
  /** Per slot, the last sequence this instance's memory holds (its own slot included). */
  private readonly applied = new Map<string, number>();
  /** The store's versions: this instance's count of writes applied (loaded records are 1). */
  private localVersion = 1;
  /** The local version of each of this instance's commits not yet published, by its sequence. */
  private readonly ownSeqByVersion = new Map<number, number>();
  private othersWrote: () => void = () => {};
  private board: WatermarkBoard | null = null;
  private closed = false;
  private counters = { commits: 0, compactions: 0 };
  private lastWriteError: string | null = null;
  /** The last failure to reach the database (a catch-up or the heartbeat), null once one succeeds. */
  private unreachable: string | null = null;
  private readonly follow: boolean;
  private catchUpTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private beats = 0;
  /** The removals the table keeps, for the store's compaction trigger. */
  private readonly removals: RemovalCount;

  private constructor(pgModule: typeof import('pg'), options: PostgresLogOptions) {
    this.tombstoneRetentionMs = options.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
    this.removals = new RemovalCount(this.tombstoneRetentionMs);
    this.pool = new pgModule.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 5_000, ...KEEPALIVE });
    // An idle connection dropped by the server (restart, outage) is replaced on next use.
    this.pool.on('error', () => {});
    this.follow = options.follow !== false;
  }

  /** Connects, creates or migrates the tables, and (following) makes this instance's slot and starts its catch-ups. */
  static async open(options: PostgresLogOptions): Promise<PostgresLog> {
    const pgModule = await importDriver();
    const log = new PostgresLog(pgModule, options);
    try {
      const client = await log.pool.connect();
      try {
        await migrate(client);
        log.storeId = (await client.query<{ store_id: string }>('SELECT store_id FROM marketplace_meta WHERE id = 1')).rows[0]!.store_id;
      } finally {
        client.release();
      }
      if (log.follow) {
        await log.pool.query('INSERT INTO marketplace_log_slots (id, last_seq) VALUES ($1, 0)', [log.slot]);
        log.applied.set(log.slot, 0);
        await log.beat();
        log.startWatching();
      }
    } catch (error) {
      await log.close();
      throw error;
    }
    return log;
  }

  /** The commit watermark's board (Redis); until given, the watermark is read from the database. */
  useWatermark(board: WatermarkBoard): void {
    this.board = board;
  }

  /** Every slot's last sequence, read from the database: the watermark's ground truth. */
  async slotTruth(): Promise<Watermark> {
    const result = await this.pool.query<{ id: string; last_seq: string }>('SELECT id, last_seq FROM marketplace_log_slots');
    return new Map(result.rows.map((row) => [row.id, Number(row.last_seq)]));
  }

  async load(sink: LoadSink): Promise<{ lastVersion: number }> {
    const client = await this.pool.connect();
    try {
      // One snapshot: the records and each slot's last sequence they are the state of.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const running = await client.query<{ running_from: string }>(RUNNING_FROM_SQL);
      const slots = await client.query<{ id: string; last_seq: string }>('SELECT id, last_seq FROM marketplace_log_slots');
      const rows = await client.query<RecordRow>('SELECT collection, id, data FROM marketplace_records WHERE data IS NOT NULL');
      await this.countRemovals(client);
      await client.query('COMMIT');
      for (const row of rows.rows) sink.put(row.collection, row.data!, 1);
      for (const slot of slots.rows) if (slot.id !== this.slot) this.applied.set(slot.id, Number(slot.last_seq));
      this.settle(running.rows[0]!.running_from);
    } finally {
      client.release();
    }
    return { lastVersion: this.localVersion };
  }

  async append(entries: readonly LogEntry[]): Promise<AppendOutcome[]> {
    const batch = JSON.stringify(entries.map((entry) => entry.ops.map(toRow)));
    const reads = JSON.stringify(entries.map((entry) => entry.reads.map((read) => ({ c: read.collection, id: read.id }))));
    const locks = commitLocks(entries);
    let seqs: (number | null)[];
    let orderBase: number | null;
    try {
      const result = await this.pool.query<{ outcome: { seqs: (number | null)[]; order_base: number | null } }>(COMMIT_SQL, [
        this.slot,
        this.appliedJson(),
        batch,
        reads,
        locks.keys,
        locks.exclusive,
      ]);
      ({ seqs, order_base: orderBase } = result.rows[0]!.outcome);
      this.lastWriteError = null;
    } catch (error) {
      this.lastWriteError = (error as Error).message || 'PostgreSQL unavailable';
      throw error;
    }
    const outcomes: AppendOutcome[] = [];
    let ordered = 0;
    seqs.forEach((seq, index) => {
      if (seq === null) {
        outcomes.push('conflict');
        return;
      }
      // The numbers the commit gave (schema.ts), in the same order, so memory holds what the table does.
      for (const op of entries[index]!.ops) if (op.op === 'put' && op.ordered) (op.data as unknown as { seq: number }).seq = orderBase! + ordered++;
      this.localVersion += 1;
      this.applied.set(this.slot, seq);
      this.ownSeqByVersion.set(this.localVersion, seq);
      this.removals.removed(entries[index]!.ops.filter((op) => op.op === 'del').length);
      outcomes.push({ version: this.localVersion });
    });
    if (outcomes.some((outcome) => outcome !== 'conflict')) this.counters.commits += 1;
    return outcomes;
  }

  async pull(apply: (write: PulledWrite) => void): Promise<void> {
    let result;
    try {
      result = await this.pool.query<PulledRow>(PULL_SQL, [this.appliedJson(), this.slot]);
      this.unreachable = null;
    } catch (error) {
      this.unreachable = (error as Error)?.message || 'PostgreSQL unavailable';
      throw error;
    }
    this.applyPulled(result.rows, apply);
    this.settle(result.rows[0]!.running_from);
  }

  orderedBelow(): number {
    return this.settledOrder;
  }

  /** Every transaction below `runningFrom` has ended, and what it committed is in memory now. */
  private settle(runningFrom: string): void {
    this.settledOrder = Math.max(this.settledOrder, Number(runningFrom) * ORDER_SPAN);
  }

  /** What this instance's memory holds, per slot, as the commit and the pull take it (a JSON object). */
  private appliedJson(): string {
    return JSON.stringify(Object.fromEntries(this.applied));
  }

  /** Raises this instance's slot in the watermark to the commit that got local `version` (and every earlier one). */
  async published(version: number): Promise<void> {
    const seq = this.ownSeqByVersion.get(version);
    if (seq === undefined) return;
    for (const known of this.ownSeqByVersion.keys()) if (known <= version) this.ownSeqByVersion.delete(known);
    // Without a board (a one-off tool), nobody reads a watermark.
    await this.board?.raise(this.slot, seq);
  }

  /** The watermark from Redis; from the database when Redis cannot answer (never below Redis's). */
  async watermark(): Promise<Watermark> {
    if (this.board === null) return this.slotTruth();
    try {
      return await this.board.read();
    } catch {
      return this.slotTruth();
    }
  }

  trusts(_watermark: Watermark): boolean {
    return this.board !== null && this.board.trusted();
  }

  covers(watermark: Watermark): boolean {
    for (const [slot, seq] of watermark) {
      if (slot !== this.slot && (this.applied.get(slot) ?? 0) < seq) return false;
    }
    return true;
  }

  /** What keeps this instance from being ready: the database unreachable, or fallen too far behind. */
  problems(): string[] {
    const problems: string[] = [];
    if (this.unreachable !== null) problems.push(`the database cannot be reached: ${this.unreachable}`);
    if (this.lastWriteError !== null && this.lastWriteError.startsWith(FELL_BEHIND)) problems.push(this.lastWriteError);
    return problems;
  }

  /** Hands over pulled rows as writes (one per slot and sequence), and moves `applied` to each slot's last sequence. */
  private applyPulled(rows: readonly PulledRow[], apply: (write: PulledWrite) => void): void {
    for (const row of rows) {
      if (row.slot_id !== null && Number(row.dropped_through) > (this.applied.get(row.slot_id) ?? 0)) {
        // Removals this instance never saw are gone: its memory may keep removed records. Writes
        // stop (503, /readyz not ready) until it is restarted and loads the current state.
        this.lastWriteError = `${FELL_BEHIND} for longer than removals are kept; restart it`;
        throw new Error(this.lastWriteError);
      }
    }
    let ops: WriteOp[] = [];
    let current = '';
    const flush = () => {
      if (ops.length === 0) return;
      this.localVersion += 1;
      apply({ ops, version: this.localVersion });
      ops = [];
    };
    for (const row of rows) {
      if (row.seq === null || row.slot_id === null) continue;
      const write = `${row.slot_id} ${row.seq}`;
      if (write !== current) flush();
      current = write;
      ops.push(row.data === null ? { op: 'del', collection: row.collection, id: row.id } : { op: 'put', collection: row.collection, id: row.id, data: row.data });
      if (row.data === null) this.removals.removed(1);
    }
    flush();
    for (const row of rows) if (row.slot_id !== null) this.applied.set(row.slot_id, Math.max(this.applied.get(row.slot_id) ?? 0, Number(row.last_seq)));
  }

  /**
   * Copies `records` into a database no instance has written to, as one write in one
   * transaction (all or nothing): the destination side of `marketplace migrate`. Throws
   * DatabaseNotEmptyError, storing nothing, when the database holds any record or write.
   */
  async fillEmpty(records: readonly WriteOp[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Keeps any instance starting meanwhile from writing in between (its commits wait).
      await client.query('LOCK TABLE marketplace_log_slots, marketplace_records IN EXCLUSIVE MODE');
      const rows = await client.query<{ count: string }>('SELECT count(*) AS count FROM marketplace_records');
      const written = await client.query<{ seqs: string }>("SELECT coalesce(sum(last_seq), 0) AS seqs FROM marketplace_log_slots WHERE id <> 'before-5'");
      if (Number(rows.rows[0]!.count) !== 0 || Number(written.rows[0]!.seqs) !== 0) {
        throw new DatabaseNotEmptyError(`the database is not empty (${rows.rows[0]!.count} records, ${written.rows[0]!.seqs} writes)`);
      }
      // The copy is one write of a slot of its own.
      const slot = `migrate-${randomUUID()}`;
      await client.query('INSERT INTO marketplace_log_slots (id, last_seq) VALUES ($1, 1)', [slot]);
      for (let start = 0; start < records.length; start += FILL_ROWS_PER_STATEMENT) {
        const chunk = records.slice(start, start + FILL_ROWS_PER_STATEMENT).map(toRow);
        await client.query(
          `INSERT INTO marketplace_records (collection, id, slot, seq, data)
           SELECT c, id, $2, 1, d FROM json_to_recordset($1) AS rows(op text, c text, id text, d json) WHERE op = 'put'`,
          [JSON.stringify(chunk), slot],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * How many server instances run on this database: those whose row in marketplace_instances
   * says it runs in the last few seconds (a running instance says so every 2 seconds; one
   * stopped cleanly deletes its row, one killed stops saying so). This log's own row, if it
   * follows, is not counted.
   */
  async followers(): Promise<number> {
    const result = await this.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM marketplace_instances
        WHERE id <> $1 AND beat_at > clock_timestamp() - make_interval(secs => $2)`,
      [this.slot, RUNNING_INSTANCE_REPORTED_WITHIN_MS / 1000],
    );
    return Number(result.rows[0]!.count);
  }

  onOthersWrote(callback: () => void): void {
    this.othersWrote = callback;
  }

  /**
   * Drops old tombstones and lets PostgreSQL reclaim the space of superseded rows, holding the
   * store's write queue throughout (no append or pull changes the removals counted meanwhile).
   */
  compact(source: LiveCompactionSource): Promise<CompactResult> {
    return source.exclusive(() => this.compactInDatabase());
  }

  /** The table keeps only each record's latest state: no earlier versions to give. */
  async earlierVersions(_collection: string, _id: string): Promise<StoredRecord[]> {
    return [];
  }

  /**
   * Instances compacting at the same moment take turns (an advisory lock): the later ones find
   * nothing left to drop, and only count the removals again.
   */
  private async compactInDatabase(): Promise<CompactResult> {
    const client = await this.pool.connect();
    try {
      await client.query(COMPACTION_LOCK);
      try {
        return await this.compactHoldingLock(client);
      } finally {
        await client.query(COMPACTION_UNLOCK);
      }
    } finally {
      client.release();
    }
  }

  private async compactHoldingLock(client: ClientBase): Promise<CompactResult> {
    const before = await this.tableBytes();
    await client.query(
      `WITH dropped AS (
         DELETE FROM marketplace_records WHERE data IS NULL AND changed_at < now() - make_interval(secs => $1) RETURNING slot, seq)
       UPDATE marketplace_log_slots s SET dropped_through = GREATEST(s.dropped_through, d.through)
         FROM (SELECT slot, max(seq) AS through FROM dropped GROUP BY slot) d WHERE s.id = d.slot`,
      [this.tombstoneRetentionMs / 1000],
    );
    await client.query('VACUUM marketplace_records');
    await this.countRemovals(client);
    this.counters.compactions += 1;
    return { bytesBefore: before, bytesAfter: await this.tableBytes() };
  }

  stats(): LogStats {
    return {
      opsInLog: 0,
      commits: this.counters.commits,
      compactions: this.counters.compactions,
      lastWriteError: this.lastWriteError,
      removals: this.removals.stats(),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.catchUpTimer) clearInterval(this.catchUpTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    // A clean stop: `migrate` need not wait for this instance's row to age.
    if (this.follow) await this.pool.query('DELETE FROM marketplace_instances WHERE id = $1', [this.slot]).catch(() => {});
    await this.pool.end().catch(() => {});
  }

  /** Counts the table's removals again: those old enough to drop, and the ages of the others. */
  private async countRemovals(client: ClientBase): Promise<void> {
    const result = await client.query<{ older: string; younger_ages_ms: number[] | null }>(
      `SELECT count(*) FILTER (WHERE changed_at < now() - make_interval(secs => $1)) AS older,
              array_agg((extract(epoch FROM now() - changed_at) * 1000)::float8) FILTER (WHERE changed_at >= now() - make_interval(secs => $1)) AS younger_ages_ms
         FROM marketplace_records WHERE data IS NULL`,
      [this.tombstoneRetentionMs / 1000],
    );
    const row = result.rows[0]!;
    this.removals.reset(Number(row.older), row.younger_ages_ms ?? []);
  }

  private async tableBytes(): Promise<number> {
    const result = await this.pool.query<{ bytes: string }>("SELECT pg_total_relation_size('marketplace_records') AS bytes");
    return Number(result.rows[0]!.bytes);
  }

  /** The periodic catch-up and the heartbeat. */
  private startWatching(): void {
    this.catchUpTimer = setInterval(() => this.othersWrote(), CATCH_UP_MS);
    this.catchUpTimer.unref();
    this.heartbeatTimer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  /**
   * Forgets the slots of instances gone for an hour (and their rows): every running instance has
   * long applied their writes, and an instance starting loads them. Their watermark fields go
   * too, since the limiter's script reads the whole watermark with each request.
   */
  private async forgetGoneSlots(): Promise<void> {
    const gone = await this.pool.query<{ id: string }>(
      `DELETE FROM marketplace_log_slots s
        WHERE s.id <> $1 AND s.created_at < now() - interval '1 hour'
          AND NOT EXISTS (SELECT 1 FROM marketplace_instances i WHERE i.id = s.id AND i.beat_at > now() - interval '1 hour')
       RETURNING s.id`,
      [this.slot],
    );
    await this.pool.query("DELETE FROM marketplace_instances WHERE beat_at < now() - interval '1 hour'");
    for (const { id } of gone.rows) this.applied.delete(id);
    if (gone.rows.length > 0) await this.board?.forget(gone.rows.map((row) => row.id));
  }

  /** Says this instance runs (for `migrate`'s check); a failure is what /readyz reports until one succeeds. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    this.beats += 1;
    if (this.beats % BEATS_BETWEEN_SLOT_SWEEPS === 1) void this.forgetGoneSlots().catch(() => {});
    try {
      await this.pool.query(
        'INSERT INTO marketplace_instances (id, beat_at) VALUES ($1, clock_timestamp()) ON CONFLICT (id) DO UPDATE SET beat_at = EXCLUDED.beat_at',
        [this.slot],
      );
      this.unreachable = null;
    } catch (error) {
      this.unreachable = (error as Error)?.message || 'PostgreSQL unavailable';
    }
  }
}

/** One changed row of a slot that moved (slot_id null: nothing moved), each with the snapshot's oldest running transaction. */
type PulledRow = Omit<RecordRow, 'slot' | 'seq'> & { running_from: string; slot_id: string | null; seq: string | null; last_seq: string; dropped_through: string };
const FELL_BEHIND = 'this instance fell behind the database';

/** An op as marketplace_commit takes it; `o`: the commit sets the record's `seq` (an ordered record). */
function toRow(op: WriteOp): { op: string; c: string; id: string; d?: unknown; o?: 1 } {
  if (op.op === 'del') return { op: 'del', c: op.collection, id: op.id };
  return op.ordered ? { op: 'put', c: op.collection, id: op.id, d: op.data, o: 1 } : { op: 'put', c: op.collection, id: op.id, d: op.data };
}

async function importDriver(): Promise<typeof import('pg')> {
  try {
    // pg is CommonJS: its classes are on the default export when imported from ESM.
    const imported = (await import('pg')) as typeof import('pg') & { default?: typeof import('pg') };
    return imported.default ?? imported;
  } catch {
    throw new Error('DATABASE_URL is set but the PostgreSQL driver is not installed: run "npm install pg".');
  }
}
