// Read-your-writes across instances: how far each instance has applied the log, kept in the
// table marketplace_instances (schema.ts), and the lease that lets an instance answer requests.
//
// The promise: once a write is acknowledged, every instance answers with it from the next
// request on. It is kept by three rules, with two lengths of time: the lease
// (INSTANCE_LEASE_MS, 1.7 s by default) and the lapse, a little longer (lapseAfter: 2 s).
//
// 1. A member reports. After each catch-up (a pull) an instance writes the version it has applied
//    into its row, with the database's clock time (`beat_at`), and announces it (NOTIFY on
//    APPLIED_CHANNEL). A report succeeds only while the row is not `lapsed`. The instance may
//    answer requests until the lease has passed since it sent its last successful report,
//    measured on its own monotonic clock; past that it refuses (503) and /readyz says why.
//    Catch-ups run at least every half second, so a healthy instance renews its lease long
//    before it ends.
// 2. A writer waits. Once its write has committed at version v, the writer looks up the members
//    that have not reported v yet and waits until each has (their announcements wake it, and it
//    reads the table again every POLL_MS in case one was missed), or until a member's last report
//    is older than that member's lapse (its row names it) in the database's clock. Such a member
//    is marked lapsed in the same statement that finds it old (the row lock orders this against
//    the member's own reports), so no later report of it succeeds: its lease, which began before
//    that old report and is shorter than its lapse, has already ended, and it will not get another
//    until it has caught up. Only then is the write acknowledged. An instance that is slow,
//    stalled or cut off therefore delays writes by at most its lapse, once, and never answers
//    from the past.
// 3. A lapsed (or new) instance rejoins. It catches up while holding a share lock on the meta row,
//    which every commit's marketplace_append takes for update, so no write commits between its
//    catch-up and the row saying it is a member again; every writer committing later waits for it.
//    A new instance registers as lapsed before it loads, so a writer either sees it (and waits)
//    or committed before it loaded.
//
// A database that is down (it refuses connections, or is shutting down or starting up) commits
// nothing and marks nobody lapsed, so an instance that was current when it went down goes on
// answering reads (writes get 503) until it can reach it again. When it returns, a writer does
// not mark a member lapsed before the database has been up for the lapse, which leaves every
// member that was answering time to catch up and report first. (A database that times out is
// not "down": it may be answering others, and the lease rules apply.)

import { randomUUID } from 'node:crypto';
import type { ClientBase, Pool } from 'pg';
import { APPLIED_CHANNEL } from './schema.ts';

/**
 * How old (database clock) a member's last report may be before a writer stops waiting for it:
 * longer than the lease (how long a member answers after sending a report that succeeded), for
 * the clocks' drift and the report's delays. 2 s for the default 1.7 s lease.
 */
export function lapseAfter(leaseMs: number): number {
  return Math.ceil((leaseMs * 20) / 17);
}
/** A waiting writer reads the table again this often, whatever the announcements do. */
const POLL_MS = 200;

interface MemberRow {
  id: string;
  applied: string;
  lapse_ms: number;
  age_ms: number;
}

/** The other members, read after a given moment: what each has applied and when it would lapse (monotonic). */
interface Members {
  sentAt: number;
  members: { id: string; applied: number; lapsesAt: number }[];
}

/**
 * Marks lapsed the other members whose last report is older than their lapse (rule 2; a database
 * that just started gives them their lapse from its start), and answers the remaining members.
 */
const MEMBERS_SQL = `
  WITH fenced AS (
    UPDATE marketplace_instances SET lapsed = true
     WHERE id <> $1 AND NOT lapsed
       AND GREATEST(beat_at, pg_postmaster_start_time()) < clock_timestamp() - make_interval(secs => lapse_ms / 1000.0::float8)
    RETURNING id)
  SELECT id, applied, lapse_ms, (extract(epoch FROM clock_timestamp() - GREATEST(beat_at, pg_postmaster_start_time())) * 1000)::float8 AS age_ms
    FROM marketplace_instances
   WHERE id <> $1 AND NOT lapsed AND id NOT IN (SELECT id FROM fenced)`;

const REPORT_SQL = `
  WITH beat AS (
    UPDATE marketplace_instances SET applied = GREATEST(applied, $2), beat_at = clock_timestamp()
     WHERE id = $1 AND NOT lapsed RETURNING applied)
  SELECT pg_notify('${APPLIED_CHANNEL}', $1::text || ' ' || applied::text) FROM beat`;

export class InstanceLeases {
  /** This instance's row. */
  readonly id = randomUUID();
  private readonly pool: Pool;
  private readonly now: () => number;
  /** The version this instance has applied (the log's cursor). */
  private readonly applied: () => number;
  private readonly leaseMs: number;
  private readonly lapseMs: number;
  private leaseUntil = -Infinity;
  private member = false;
  private reporting = false;
  private reportDue = false;
  /** The last failure to reach the database, null once a report or catch-up succeeds. */
  private problem: string | null = null;
  /** The database is down (not merely slow), and this instance was current when it went down. */
  private currentWhenDown = false;
  /** Versions the other instances announced they have applied. */
  private readonly appliedByOthers = new Map<string, number>();
  private readonly wakers = new Set<() => void>();
  private closed = false;
  private lastMembers: Members | null = null;
  private readingMembers: { sentAt: number; read: Promise<Members> } | null = null;

  constructor(pool: Pool, applied: () => number, leaseMs: number, now: () => number = () => performance.now()) {
    this.pool = pool;
    this.applied = applied;
    this.leaseMs = leaseMs;
    this.lapseMs = lapseAfter(leaseMs);
    this.now = now;
  }

  /** Adds this instance's row, lapsed: writers do not wait for it until it has caught up and rejoined. */
  async register(): Promise<void> {
    await this.pool.query('INSERT INTO marketplace_instances (id, applied, beat_at, lapsed, lapse_ms) VALUES ($1, 0, clock_timestamp(), true, $2)', [
      this.id,
      this.lapseMs,
    ]);
  }

  /** False once a writer stopped waiting for this instance: its next catch-up must rejoin. */
  isMember(): boolean {
    return this.member;
  }

  /**
   * Rejoins, inside the caller's transaction, which holds the meta row FOR SHARE and has just
   * caught up to `applied` (everything committed); `rejoined` follows its commit.
   */
  async rejoin(client: ClientBase, applied: number): Promise<void> {
    await client.query(
      `INSERT INTO marketplace_instances (id, applied, beat_at, lapsed, lapse_ms) VALUES ($1, $2, clock_timestamp(), false, $3)
       ON CONFLICT (id) DO UPDATE SET applied = EXCLUDED.applied, beat_at = EXCLUDED.beat_at, lapsed = false, lapse_ms = EXCLUDED.lapse_ms`,
      [this.id, applied, this.lapseMs],
    );
    await client.query(`SELECT pg_notify('${APPLIED_CHANNEL}', $1)`, [`${this.id} ${applied}`]);
  }

  /** The rejoining transaction, begun at `sentAt` (monotonic), committed. */
  rejoined(sentAt: number): void {
    this.member = true;
    this.renew(sentAt);
  }

  /** Reports the applied version (after a catch-up); reports never overlap, the latest wins. */
  report(): void {
    this.reportDue = true;
    if (this.reporting || this.closed) return;
    this.reporting = true;
    void (async () => {
      try {
        while (this.reportDue && !this.closed) {
          this.reportDue = false;
          const sentAt = this.now();
          try {
            const result = await this.pool.query(REPORT_SQL, [this.id, this.applied()]);
            if (result.rows.length === 1) this.renew(sentAt);
            else this.member = false; // lapsed: the next catch-up rejoins
          } catch (error) {
            this.failed(error);
          }
        }
      } finally {
        this.reporting = false;
      }
    })();
  }

  /** A catch-up or report could not reach the database. */
  failed(error: unknown): void {
    this.problem = (error as Error)?.message || 'PostgreSQL unavailable';
    if (!isDatabaseDown(error)) this.currentWhenDown = false;
    else if (this.member && this.now() < this.leaseUntil) this.currentWhenDown = true;
  }

  /** An APPLIED_CHANNEL announcement: "<instance id> <version>". */
  heard(payload: string): void {
    const [id, version] = payload.split(' ');
    if (id === undefined || id === this.id) return;
    const applied = Number(version);
    if (applied > (this.appliedByOthers.get(id) ?? 0)) this.appliedByOthers.set(id, applied);
    for (const wake of [...this.wakers]) wake();
  }

  /** Why this instance may not answer now (it cannot vouch it has every acknowledged write), or null. */
  staleness(): string | null {
    if (this.now() < this.leaseUntil || this.currentWhenDown) return null;
    const why = this.problem === null ? '' : ` (${this.problem})`;
    return this.member
      ? `this instance has not confirmed for ${this.leaseMs} ms that it is caught up with the database${why}`
      : `this instance is catching up with the other instances${why}`;
  }

  /** The database could not be reached by the last catch-up or report. */
  unreachable(): string | null {
    return this.problem;
  }

  /** Resolves once every other member has applied `version`, or lapsed (rule 2 above). Call it once the write committed. */
  async untilAppliedEverywhere(version: number): Promise<void> {
    // Writes committing together share their reads of the table: one read after the commit serves each.
    let known = await this.membersAfter(this.now());
    for (;;) {
      if (this.closed) return;
      const behind = known.members.filter((member) => member.applied < version && (this.appliedByOthers.get(member.id) ?? 0) < version);
      if (behind.length === 0) return;
      const nextCheck = Math.min(known.sentAt + POLL_MS, ...behind.map((member) => member.lapsesAt));
      const now = this.now();
      if (now < nextCheck) await this.wakeOrWait(nextCheck - now);
      else known = await this.membersAfter(now);
    }
  }

  /** Removes this instance's row (a clean stop): writers stop waiting for it at once. */
  async leave(): Promise<void> {
    this.closed = true;
    for (const wake of [...this.wakers]) wake();
    await this.pool.query('DELETE FROM marketplace_instances WHERE id = $1', [this.id]).catch(() => {});
  }

  private renew(sentAt: number): void {
    this.problem = null;
    this.currentWhenDown = false;
    this.leaseUntil = Math.max(this.leaseUntil, sentAt + this.leaseMs);
  }

  /** The other members as read by a query sent at `after` or later (shared with every writer waiting meanwhile). */
  private membersAfter(after: number): Promise<Members> {
    if (this.lastMembers !== null && this.lastMembers.sentAt >= after) return Promise.resolve(this.lastMembers);
    if (this.readingMembers !== null && this.readingMembers.sentAt >= after) return this.readingMembers.read;
    const sentAt = this.now();
    const read = this.pool.query<MemberRow>(MEMBERS_SQL, [this.id]).then((result) => {
      const receivedAt = this.now();
      // A millisecond past the lapse, so the check then finds it old enough.
      const members = result.rows.map((row) => ({ id: row.id, applied: Number(row.applied), lapsesAt: receivedAt + Math.max(0, row.lapse_ms - row.age_ms) + 1 }));
      const known = { sentAt, members };
      if (this.lastMembers === null || this.lastMembers.sentAt < sentAt) this.lastMembers = known;
      return known;
    });
    this.readingMembers = { sentAt, read };
    void read.finally(() => {
      if (this.readingMembers?.read === read) this.readingMembers = null;
    }).catch(() => {});
    return read;
  }

  private wakeOrWait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}

/** PostgreSQL error codes of a server that is shutting down, crashed or starting up. */
const DOWN_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED']);

/** The database is down for everyone (it refused or closed the connection), not merely unreachable or slow. */
function isDatabaseDown(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (code !== undefined && DOWN_CODES.has(code)) || message === 'Connection terminated unexpectedly';
}
