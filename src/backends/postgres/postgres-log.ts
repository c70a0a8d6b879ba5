// The record log in PostgreSQL (contracts: src/store/log.ts, and src/store/instance-sync.ts for
// following the other instances; tables: schema.ts), shared by any number of instances. Each instance keeps every record in memory, as with the file, and
// follows the others: a commit notifies (LISTEN/NOTIFY) with its version, and `pull` reads
// every record changed since the last version this instance knows, in version order, in one
// snapshot. After a lost connection the listener reconnects and pulls, so nothing is missed.
// A follower cannot fall silent: its listening connection has TCP keepalive and is asked to
// answer every second (a stalled one is dropped and made again), and it catches up every half
// second whatever the notifications do. A write is acknowledged only once every running instance
// has applied it, and an instance that cannot vouch it is caught up refuses to answer
// (instance-leases.ts): read-your-writes whichever instance a client's next request reaches.
//
// Writes: `append` sends a batch in one call of marketplace_append, which commits each entry
// whose reads no other instance changed since this one last caught up and answers the others
// `conflict`; the store pulls and decides those again on the new state. When others committed
// in between, `needsPull` asks the store to read their writes before it decides anything else;
// until then this instance's own writes past its cursor are remembered, so a pull does not hand
// them back as others' writes. A PostgreSQL outage
// rejects appends (the store answers 503) while reads go on from memory; the pool and the
// listener reconnect by themselves when the database returns.
//
// The driver (`pg`) is an optional peer dependency, imported only when DATABASE_URL is set.

import type { Client, ClientBase, Pool, PoolClient } from 'pg';
import type { StoredRecord, WriteOp } from '../../store/format.ts';
import type { InstanceSync, PulledWrite } from '../../store/instance-sync.ts';
import type { AppendOutcome, CompactResult, LiveCompactionSource, LoadSink, Log, LogEntry, LogStats } from '../../store/log.ts';
import { DEFAULT_INSTANCE_LEASE_MS } from '../../config.ts';
import { InstanceLeases } from './instance-leases.ts';
import { RemovalCount } from './removals.ts';
import { APPLIED_CHANNEL, CHANGES_CHANNEL, migrate } from './schema.ts';

/** followers(): an instance that reported within this long is running (each reports at least twice a second). */
const RUNNING_INSTANCE_REPORTED_WITHIN_MS = 5_000;

export interface PostgresLogOptions {
  url: string;
  warn: (message: string) => void;
  /** Tombstones (removed records) older than this are dropped at compaction. */
  tombstoneRetentionMs?: number;
  /** False: do not follow other instances' writes (a one-off tool such as `migrate`). Default true. */
  follow?: boolean;
  /** How long this instance answers after confirming it is caught up (INSTANCE_LEASE_MS); default DEFAULT_INSTANCE_LEASE_MS. */
  leaseMs?: number;
}

/** `fillEmpty` found records (or writes) in the database: nothing was written. */
export class DatabaseNotEmptyError extends Error {}

interface RecordRow {
  collection: string;
  id: string;
  version: string;
  data: { id: string } | null;
}

const RECONNECT_DELAY_MS = 500;
/** A catch-up (and report) at least this often, whatever the notifications do. */
const CATCH_UP_MS = 500;
/** The listening connection is asked to answer this often, and dropped when it does not within LIVENESS_TIMEOUT_MS. */
const LIVENESS_MS = 1_000;
const LIVENESS_TIMEOUT_MS = 1_500;
/** Also the liveness question: LISTEN again is harmless. */
const LISTEN_SQL = `LISTEN ${CHANGES_CHANNEL}; LISTEN ${APPLIED_CHANNEL}`;
/** Dead peers and half-open connections are noticed by the kernel too. */
const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 5_000 };
/** Everything committed since the cursor, in commit order, with the last version (the meta row always answers). */
const PULL_SQL = `SELECT m.last_version, m.tombstones_dropped_through AS dropped_through, r.collection, r.id, r.version, r.data
   FROM marketplace_meta m LEFT JOIN marketplace_records r ON r.version > $1
  WHERE m.id = 1 ORDER BY r.version`;
/** One compaction at a time across instances (session lock, held on one pooled connection). */
const COMPACTION_LOCK = 'SELECT pg_advisory_lock(727274002)';
const COMPACTION_UNLOCK = 'SELECT pg_advisory_unlock(727274002)';
/** Records per INSERT when filling an empty database (keeps each statement's JSON a few MB). */
const FILL_ROWS_PER_STATEMENT = 2_000;
const DEFAULT_TOMBSTONE_RETENTION_MS = 10 * 60 * 1000;

export class PostgresLog implements Log, InstanceSync {
  private readonly pool: Pool;
  private readonly url: string;
  private readonly warn: (message: string) => void;
  private readonly tombstoneRetentionMs: number;
  private readonly makeClient: () => Client;
  /** Every write up to this version is in this instance's memory (what its writes are decided on). */
  private cursor = 1;
  /** Versions past the cursor that this instance wrote itself: in memory already, skipped by `pull`. */
  private ownAhead: { first: number; last: number }[] = [];
  private othersWrote: () => void = () => {};
  private listener: Client | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private counters = { commits: 0, compactions: 0 };
  private lastWriteError: string | null = null;
  /** The listener is down: a catch-up pull is due when it comes back. */
  private listenerLost = false;
  private readonly follow: boolean;
  /** Read-your-writes across instances (null when not following: a one-off tool). */
  private readonly leases: InstanceLeases | null;
  private catchUpTimer: NodeJS.Timeout | null = null;
  private livenessTimer: NodeJS.Timeout | null = null;
  private livenessAsked = false;
  /** The removals the table keeps, for the store's compaction trigger. */
  private readonly removals: RemovalCount;

  private constructor(pgModule: typeof import('pg'), options: PostgresLogOptions) {
    this.url = options.url;
    this.warn = options.warn;
    this.tombstoneRetentionMs = options.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
    this.removals = new RemovalCount(this.tombstoneRetentionMs);
    this.pool = new pgModule.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 5_000, ...KEEPALIVE });
    // An idle connection dropped by the server (restart, outage) is replaced on next use.
    this.pool.on('error', () => {});
    this.makeClient = () =>
      new pgModule.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000, application_name: 'marketplace-follower', ...KEEPALIVE });
    this.follow = options.follow !== false;
    this.leases = this.follow ? new InstanceLeases(this.pool, () => this.cursor, options.leaseMs ?? DEFAULT_INSTANCE_LEASE_MS) : null;
  }

  /** Connects, creates or migrates the tables, and starts listening for other instances' writes. */
  static async open(options: PostgresLogOptions): Promise<PostgresLog> {
    const pgModule = await importDriver();
    const log = new PostgresLog(pgModule, options);
    try {
      const client = await log.pool.connect();
      try {
        await migrate(client);
      } finally {
        client.release();
      }
      if (log.leases !== null) {
        await log.leases.register();
        await log.listen();
        log.startWatching();
      }
    } catch (error) {
      await log.close();
      throw error;
    }
    return log;
  }

  async load(sink: LoadSink): Promise<{ lastVersion: number }> {
    const client = await this.pool.connect();
    try {
      // One snapshot: the records and the version they are the state of.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const meta = await client.query<{ last_version: string }>('SELECT last_version FROM marketplace_meta WHERE id = 1');
      const rows = await client.query<RecordRow>('SELECT collection, id, version, data FROM marketplace_records WHERE data IS NOT NULL');
      await this.countRemovals(client);
      await client.query('COMMIT');
      for (const row of rows.rows) sink.put(row.collection, row.data!, Number(row.version));
      this.cursor = Number(meta.rows[0]!.last_version);
    } finally {
      client.release();
    }
    // What was committed since the snapshot, and this instance becomes one whose writers wait.
    if (this.leases !== null) {
      await this.rejoin((write) => {
        for (const op of write.ops) {
          if (op.op === 'put') sink.put(op.collection, op.data, write.version);
          else sink.remove(op.collection, op.id, write.version);
        }
      });
    }
    return { lastVersion: this.cursor };
  }

  async append(entries: readonly LogEntry[]): Promise<AppendOutcome[]> {
    const batch = JSON.stringify(entries.map((entry) => entry.ops.map(toRow)));
    const reads = JSON.stringify(entries.map((entry) => entry.reads.map((read) => ({ c: read.collection, id: read.id }))));
    let outcome: { previous: number; versions: (number | null)[] };
    try {
      const result = await this.pool.query<{ outcome: typeof outcome }>('SELECT marketplace_append($1, $2, $3) AS outcome', [this.cursor, batch, reads]);
      outcome = result.rows[0]!.outcome;
      this.lastWriteError = null;
    } catch (error) {
      this.lastWriteError = (error as Error).message || 'PostgreSQL unavailable';
      throw error;
    }
    const committed = outcome.versions.filter((version): version is number => version !== null);
    if (committed.length > 0) {
      this.counters.commits += 1;
      this.removals.removed(entries.reduce((count, entry, index) => count + (outcome.versions[index] === null ? 0 : entry.ops.filter((op) => op.op === 'del').length), 0));
      const written = { first: committed[0]!, last: committed[committed.length - 1]! };
      // Nobody else wrote in between: memory holds everything up to the batch's last version.
      if (outcome.previous === this.cursor && this.ownAhead.length === 0) this.cursor = written.last;
      else this.ownAhead.push(written);
    }
    return outcome.versions.map((version) => (version === null ? 'conflict' : { version }));
  }

  /** Others committed writes this instance has not read yet, and its own went in after them. */
  needsPull(): boolean {
    return this.ownAhead.length > 0;
  }

  async pull(apply: (write: PulledWrite) => void): Promise<void> {
    if (this.leases !== null && !this.leases.isMember()) return this.rejoin(apply);
    let result;
    try {
      result = await this.pool.query<PulledRow>(PULL_SQL, [this.cursor]);
    } catch (error) {
      this.leases?.failed(error);
      throw error;
    }
    this.applyPulled(result.rows, apply);
    this.leases?.report();
  }

  /** Resolves once every other running instance has applied `version` (instance-leases.ts). */
  untilAppliedEverywhere(version: number): Promise<void> {
    return this.leases === null ? Promise.resolve() : this.leases.untilAppliedEverywhere(version);
  }

  /** Why this instance must not answer now (it cannot vouch it holds every acknowledged write), or null. */
  staleness(): string | null {
    const why = this.leases?.staleness() ?? null;
    // Catch up now rather than at the next tick (the store keeps one catch-up queued at most).
    if (why !== null && !this.closed) this.othersWrote();
    return why;
  }

  /** What keeps this instance from being ready: the database unreachable, not caught up, or fallen too far behind. */
  problems(): string[] {
    const problems: string[] = [];
    const unreachable = this.leases?.unreachable() ?? null;
    if (unreachable !== null) problems.push(`the database cannot be reached: ${unreachable}`);
    const stale = this.staleness();
    if (stale !== null) problems.push(stale);
    if (this.lastWriteError !== null && this.lastWriteError.startsWith(FELL_BEHIND)) problems.push(this.lastWriteError);
    return problems;
  }

  /**
   * Catches up holding the meta row FOR SHARE (no write commits meanwhile), then marks this
   * instance a member again: every later write waits for it (instance-leases.ts, rule 3).
   */
  private async rejoin(apply: (write: PulledWrite) => void): Promise<void> {
    const leases = this.leases!;
    const sentAt = performance.now();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      leases.failed(error);
      throw error;
    }
    try {
      await client.query('BEGIN');
      await client.query('SELECT last_version FROM marketplace_meta WHERE id = 1 FOR SHARE');
      const result = await client.query<PulledRow>(PULL_SQL, [this.cursor]);
      this.applyPulled(result.rows, apply);
      await leases.rejoin(client, this.cursor);
      await client.query('COMMIT');
      leases.rejoined(sentAt);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      leases.failed(error);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Hands over pulled rows as writes, in version order, skipping this instance's own. */
  private applyPulled(rows: readonly PulledRow[], apply: (write: PulledWrite) => void): void {
    const first = rows[0];
    if (!first) return;
    if (Number(first.dropped_through) > this.cursor) {
      // Removals this instance never saw are gone: its memory may keep removed records. Writes
      // stop (503, /readyz not ready) until it is restarted and loads the current state.
      this.lastWriteError = `${FELL_BEHIND} for longer than removals are kept; restart it`;
      throw new Error(this.lastWriteError);
    }
    let ops: WriteOp[] = [];
    let version = 0;
    for (const row of rows) {
      if (row.version === null) continue;
      const rowVersion = Number(row.version);
      if (this.ownAhead.some((own) => rowVersion >= own.first && rowVersion <= own.last)) continue;
      if (rowVersion !== version && ops.length > 0) {
        apply({ ops, version });
        ops = [];
      }
      version = rowVersion;
      ops.push(row.data === null ? { op: 'del', collection: row.collection, id: row.id } : { op: 'put', collection: row.collection, id: row.id, data: row.data });
      if (row.data === null) this.removals.removed(1);
    }
    if (ops.length > 0) apply({ ops, version });
    this.cursor = Math.max(this.cursor, Number(first.last_version));
    this.ownAhead = this.ownAhead.filter((own) => own.last > this.cursor);
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
      // The meta row's lock keeps any instance starting meanwhile from writing in between.
      const meta = await client.query<{ last_version: string }>('SELECT last_version FROM marketplace_meta WHERE id = 1 FOR UPDATE');
      const rows = await client.query<{ count: string }>('SELECT count(*) AS count FROM marketplace_records');
      const lastVersion = Number(meta.rows[0]!.last_version);
      if (lastVersion !== 1 || Number(rows.rows[0]!.count) !== 0) {
        throw new DatabaseNotEmptyError(`the database is not empty (${rows.rows[0]!.count} records, last write version ${lastVersion})`);
      }
      const version = lastVersion + 1;
      for (let start = 0; start < records.length; start += FILL_ROWS_PER_STATEMENT) {
        const chunk = records.slice(start, start + FILL_ROWS_PER_STATEMENT).map(toRow);
        await client.query(
          `INSERT INTO marketplace_records (collection, id, version, data)
           SELECT c, id, $2, d FROM json_to_recordset($1) AS rows(op text, c text, id text, d json) WHERE op = 'put'`,
          [JSON.stringify(chunk), version],
        );
      }
      await client.query('UPDATE marketplace_meta SET last_version = $1 WHERE id = 1', [version]);
      await client.query(`SELECT pg_notify('${CHANGES_CHANNEL}', $1)`, [String(version)]);
      await client.query('COMMIT');
      this.cursor = version;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * How many server instances run on this database: those whose row in marketplace_instances
   * was reported in the last few seconds (a running instance reports at least twice a second;
   * one stopped cleanly deletes its row, one killed stops reporting). This log's own row, if it
   * follows, is not counted.
   */
  async followers(): Promise<number> {
    const result = await this.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM marketplace_instances
        WHERE id <> $1 AND beat_at > clock_timestamp() - make_interval(secs => $2)`,
      [this.leases?.id ?? '', RUNNING_INSTANCE_REPORTED_WITHIN_MS / 1000],
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
         DELETE FROM marketplace_records WHERE data IS NULL AND changed_at < now() - make_interval(secs => $1) RETURNING version)
       UPDATE marketplace_meta SET tombstones_dropped_through = GREATEST(tombstones_dropped_through, (SELECT max(version) FROM dropped))
        WHERE id = 1 AND EXISTS (SELECT 1 FROM dropped)`,
      [this.tombstoneRetentionMs / 1000],
    );
    // Instances that lapsed long ago (killed, or cut off for an hour): one that is still alive registers again when it rejoins.
    await client.query("DELETE FROM marketplace_instances WHERE lapsed AND beat_at < now() - interval '1 hour'");
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
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.catchUpTimer) clearInterval(this.catchUpTimer);
    if (this.livenessTimer) clearInterval(this.livenessTimer);
    await this.leases?.leave();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
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

  /** LISTEN on a connection of its own; on loss, reconnect and catch up. */
  private async listen(): Promise<void> {
    const client = this.makeClient();
    client.on('notification', (message) => {
      if (message.channel === APPLIED_CHANNEL) this.leases?.heard(message.payload ?? '');
      else if (Number(message.payload) > this.cursor) this.othersWrote();
    });
    client.on('error', () => this.dropListener(client));
    client.on('end', () => this.dropListener(client));
    await client.connect();
    await client.query(LISTEN_SQL);
    this.listener = client;
    if (this.listenerLost) {
      this.listenerLost = false;
      // Writes committed while we were not listening: catch up now.
      this.othersWrote();
    }
  }

  /** The listening connection failed, ended or stalled: drop it and make another. */
  private dropListener(client: Client): void {
    if (this.listener !== client || this.closed) return;
    this.listener = null;
    this.listenerLost = true;
    // A stalled connection may never answer end(): its socket is destroyed.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  /** The periodic catch-up and the listening connection's liveness question. */
  private startWatching(): void {
    this.catchUpTimer = setInterval(() => this.othersWrote(), CATCH_UP_MS);
    this.catchUpTimer.unref();
    this.livenessTimer = setInterval(() => this.askListener(), LIVENESS_MS);
    this.livenessTimer.unref();
  }

  private askListener(): void {
    const client = this.listener;
    if (client === null || this.livenessAsked) return;
    this.livenessAsked = true;
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('the listening connection did not answer')), LIVENESS_TIMEOUT_MS);
    });
    Promise.race([client.query(LISTEN_SQL), stalled])
      .catch((error: Error) => {
        if (this.listener === client && !this.closed) this.warn(`Following other instances' writes: ${error.message}; connecting again`);
        this.dropListener(client);
      })
      .finally(() => {
        clearTimeout(timer);
        this.livenessAsked = false;
      });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.listen().catch(() => this.scheduleReconnect());
    }, RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }
}

type PulledRow = RecordRow & { last_version: string; dropped_through: string };
const FELL_BEHIND = 'this instance fell behind the database';

function toRow(op: WriteOp): { op: string; c: string; id: string; d?: unknown } {
  return op.op === 'put' ? { op: 'put', c: op.collection, id: op.id, d: op.data } : { op: 'del', c: op.collection, id: op.id };
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
