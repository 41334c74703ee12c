/**
 * The cluster's coordination in the shared PostgreSQL state store
 * (docs/cluster.md). No consensus of our own: every decision is one
 * transaction or one statement, and every comparison of times uses the
 * database's clock, so daemons whose clocks differ by seconds still agree.
 *
 * Life of a daemon row:
 *   registered ──heartbeat──► alive ──graceful stop──► stopped
 *                              │
 *                              └─ heartbeat older than its lease ──► fenced (by a survivor)
 * Fencing is one guarded UPDATE (`fenced_by IS NULL`), so of several
 * survivors exactly one takes a dead daemon over, and only a daemon that is
 * itself unfenced may fence another. A fenced daemon's sessions carry its id
 * (`service.daemon`), and a trigger refuses their writes to execution
 * records; the daemon finds out at its next heartbeat and stops its work.
 */
import pg from 'pg';
import { inTransaction } from '../state/pg-transaction.js';
import { guardPool } from '../targets/postgres/pg-guard.js';
import { HeartbeatSession, type BeatResult } from './heartbeat.js';
import { nowIso } from '../state/records.js';

type Row = Record<string, unknown>;

export interface DaemonInfo {
  readonly id: string;
  /** Same for every start from one host and data directory. */
  readonly node: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly url: string | null;
  readonly maxRunning: number;
  readonly leaseMs: number;
}

export interface DaemonView {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly url: string | null;
  readonly max_running: number;
  readonly lease_ms: number;
  readonly started: string;
  readonly heartbeat: string;
  /** Milliseconds since the last heartbeat, in the database's clock. */
  readonly heartbeat_age_ms: number;
  readonly state: 'alive' | 'expired' | 'stopped' | 'fenced';
  readonly fenced_by: string | null;
  readonly running: readonly string[];
}

export interface TakenOver {
  readonly exec_id: string;
  readonly project_id: string;
  readonly job_id: string;
  readonly outcome: 'interrupted' | 'requeued';
}

export const CANCEL_CHANNEL = 'service_cancel';
export const FILES_CHANNEL = 'service_files';
/** An execution was queued: idle daemons look for work at once. */
export const QUEUE_CHANNEL = 'service_queue';
/** pg_try_advisory_lock key of the git poller: one daemon polls at a time. */
const GIT_POLLER_LOCK = 7_350_211_002;

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));

export class ClusterDb {
  private listener: pg.Client | undefined;
  private closed = false;
  private holdsGitLock = false;
  private heartbeats: HeartbeatSession | undefined;

  private constructor(
    readonly pool: pg.Pool,
    private readonly url: string,
    private readonly daemonId: string,
  ) {}

  /**
   * A small pool of its own (takeovers and file sync must not queue behind
   * execution writes; heartbeats have a session of their own, see
   * `heartbeat`). Without a daemon id: an operator's read-only view.
   */
  static open(url: string, daemonId = ''): ClusterDb {
    const daemon = daemonId === '' ? {} : { options: `-c service.daemon=${daemonId}` };
    const pool = guardPool(new pg.Pool({ connectionString: url, max: 3, keepAlive: true, connectionTimeoutMillis: 10_000, ...daemon }));
    return new ClusterDb(pool, url, daemonId);
  }

  async register(d: DaemonInfo): Promise<void> {
    await this.pool.query(
      'INSERT INTO daemons (id, node, host, pid, version, url, max_running, lease_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [d.id, d.node, d.host, d.pid, d.version, d.url, d.maxRunning, d.leaseMs],
    );
  }

  async setUrl(url: string): Promise<void> {
    await this.pool.query('UPDATE daemons SET url = $2 WHERE id = $1', [this.daemonId, url]);
  }

  /**
   * Renews the lease on the heartbeat session (never behind the pool's
   * work), each renewal bounded by `timeoutMs` on the server. `fenced` when
   * this daemon was taken over meanwhile; else the renewal's time in the
   * database's clock.
   */
  heartbeat(timeoutMs: number): Promise<BeatResult> {
    this.heartbeats ??= new HeartbeatSession(this.url, this.daemonId, timeoutMs);
    return this.heartbeats.beat();
  }

  async markStopped(): Promise<void> {
    await this.pool.query('UPDATE daemons SET stopped = clock_timestamp() WHERE id = $1 AND fenced_by IS NULL', [this.daemonId]);
  }

  /**
   * Fences the daemons to take over: earlier starts of this same node (this
   * process holds the node's data-directory lock, so they are dead whatever
   * their heartbeat says) and every daemon whose heartbeat is older than its
   * lease — but only while this daemon's own renewals went through without a
   * gap since `beatingSince` (database time, see ClusterMember), from at
   * least that lease ago, and its own lease is current. Both renewed on the
   * same database during that window; only the other one did not. A stall of
   * the database itself (unreachable, a table locked) stops every daemon's
   * renewals and so fences nobody. A daemon that stopped gracefully is left
   * alone. `lastBeat` is this daemon's latest renewal (database time) when
   * it sent the query: a query that waited behind a stall (a locked table)
   * runs after the renewals it read were already a lease old, and then fences
   * nobody — its view of who renewed is from before the stall. Returns their
   * ids; empty when this daemon is itself fenced.
   */
  async fenceDead(node: string, beatingSince: Date | null, lastBeat: Date | null = beatingSince): Promise<string[]> {
    const r = await this.pool.query(
      `UPDATE daemons d SET fenced_by = $1, fenced_at = clock_timestamp()
       WHERE d.fenced_by IS NULL AND d.id <> $1 AND d.stopped IS NULL
         AND (d.node = $2 OR (
           d.heartbeat < clock_timestamp() - d.lease_ms * interval '1 millisecond'
           AND $3::timestamptz <= clock_timestamp() - d.lease_ms * interval '1 millisecond'
           AND EXISTS (SELECT 1 FROM daemons me WHERE me.id = $1 AND me.heartbeat >= clock_timestamp() - me.lease_ms * interval '1 millisecond'
             AND $4::timestamptz >= clock_timestamp() - me.lease_ms * interval '1 millisecond')))
         AND EXISTS (SELECT 1 FROM daemons me WHERE me.id = $1 AND me.fenced_by IS NULL)
       RETURNING d.id`,
      [this.daemonId, node, beatingSince, lastBeat],
    );
    return r.rows.map((x: Row) => String(x.id));
  }

  /**
   * The running executions no live daemon owns — their daemon was fenced or
   * stopped, or is unknown (claimed before cluster mode) — are re-queued when
   * the job allows retries and this was not its last attempt, else
   * interrupted with their open tasks and steps. A re-queued execution starts
   * afresh, so the records of the lost attempt are removed. Runs on every
   * beat, so a survivor that died between fencing and this still gets its
   * work finished by the next one.
   */
  takeOver(by: string): Promise<TakenOver[]> {
    return inTransaction(this.pool, async (c) => {
      const rows = (
        await c.query(
          `SELECT e.exec_id, e.project_id, e.job_id, e.attempt, e.claimed_by, j.config FROM executions e LEFT JOIN jobs j ON j.id = e.job_id
           WHERE e.status = 'running'
             AND NOT EXISTS (SELECT 1 FROM daemons d WHERE d.id = e.claimed_by AND d.fenced_by IS NULL AND d.stopped IS NULL)
           ORDER BY e.exec_id FOR UPDATE OF e SKIP LOCKED`,
        )
      ).rows as Row[];
      const out: TakenOver[] = [];
      const at = nowIso();
      for (const r of rows) {
        const retries = Number((JSON.parse(String(r.config ?? '{}')) as { retries?: number }).retries ?? 0);
        const id = String(r.exec_id);
        if (Number(r.attempt) <= retries) {
          for (const t of ['task_output', 'step_output', 'tasks', 'steps']) await c.query(`DELETE FROM ${t} WHERE exec_id = $1`, [id]);
          await c.query("UPDATE executions SET status = 'queued', claimed_by = NULL WHERE exec_id = $1 AND status = 'running'", [id]);
          out.push({ exec_id: id, project_id: String(r.project_id), job_id: String(r.job_id), outcome: 'requeued' });
        } else {
          const error = `the daemon running it (${String(r.claimed_by)}) stopped heartbeating; taken over by ${by}`;
          await c.query("UPDATE executions SET status = 'interrupted', error = $2, end_time = $3 WHERE exec_id = $1 AND status = 'running'", [id, error, at]);
          for (const t of ['tasks', 'steps']) {
            await c.query(`UPDATE ${t} SET status = 'interrupted', end_time = COALESCE(end_time, $2) WHERE exec_id = $1 AND status IN ('queued', 'running')`, [id, at]);
          }
          out.push({ exec_id: id, project_id: String(r.project_id), job_id: String(r.job_id), outcome: 'interrupted' });
        }
      }
      return out;
    });
  }

  /** Forgets daemons that stopped or were fenced more than a day ago (their executions keep naming them). */
  async prune(): Promise<number> {
    const r = await this.pool.query(
      "DELETE FROM daemons WHERE COALESCE(fenced_at, stopped) < clock_timestamp() - interval '1 day' AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.status = 'running' AND e.claimed_by = daemons.id)",
    );
    return r.rowCount ?? 0;
  }

  /** Every daemon row, newest start first, with its running executions. */
  async listDaemons(): Promise<DaemonView[]> {
    const rows = (
      await this.pool.query(
        `SELECT d.*, (extract(epoch FROM clock_timestamp() - d.heartbeat) * 1000)::bigint AS age,
           COALESCE((SELECT array_agg(e.exec_id ORDER BY e.exec_id) FROM executions e WHERE e.status = 'running' AND e.claimed_by = d.id), '{}') AS running
         FROM daemons d ORDER BY d.started DESC, d.id`,
      )
    ).rows as Row[];
    return rows.map((r) => {
      const age = Number(r.age);
      const state = r.fenced_by !== null ? 'fenced' : r.stopped !== null ? 'stopped' : age > Number(r.lease_ms) ? 'expired' : 'alive';
      return {
        id: String(r.id),
        host: String(r.host),
        pid: Number(r.pid),
        version: String(r.version),
        url: r.url === null ? null : String(r.url),
        max_running: Number(r.max_running),
        lease_ms: Number(r.lease_ms),
        started: iso(r.started),
        heartbeat: iso(r.heartbeat),
        heartbeat_age_ms: age,
        state,
        fenced_by: r.fenced_by === null ? null : String(r.fenced_by),
        running: (r.running as string[]).map(String),
      };
    });
  }

  /** The one claim of a job's due time across the cluster: true for the daemon that got it. */
  async claimSchedule(jobId: string, due: string): Promise<boolean> {
    const r = await this.pool.query('INSERT INTO schedule_claims (job_id, due_time, daemon) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1', [jobId, due, this.daemonId]);
    return (r.rowCount ?? 0) > 0;
  }

  /**
   * Due times claimed by a daemon that died before it created their
   * execution: this daemon takes the claims over and fires them.
   */
  async orphanClaims(): Promise<{ jobId: string; due: string }[]> {
    const r = await this.pool.query(
      `UPDATE schedule_claims c SET daemon = $1 WHERE c.exec_id IS NULL
         AND EXISTS (SELECT 1 FROM daemons d WHERE d.id = c.daemon AND (d.fenced_by IS NOT NULL OR d.stopped IS NOT NULL))
         AND EXISTS (SELECT 1 FROM daemons me WHERE me.id = $1 AND me.fenced_by IS NULL)
       RETURNING c.job_id, c.due_time`,
      [this.daemonId],
    );
    return r.rows.map((x: Row) => ({ jobId: String(x.job_id), due: String(x.due_time) }));
  }

  /** Of `execIds`, those no longer running (cancelled or ended through another daemon). */
  async notRunning(execIds: readonly string[]): Promise<string[]> {
    if (execIds.length === 0) return [];
    const r = await this.pool.query("SELECT exec_id FROM executions WHERE exec_id = ANY($1::text[]) AND status <> 'running'", [execIds]);
    return r.rows.map((x: Row) => String(x.exec_id));
  }

  /** Executions running in the store under this daemon's name. */
  async runningClaimedBy(): Promise<string[]> {
    const r = await this.pool.query("SELECT exec_id FROM executions WHERE status = 'running' AND claimed_by = $1", [this.daemonId]);
    return r.rows.map((x: Row) => String(x.exec_id));
  }

  async setTreeVersion(execId: string, version: number): Promise<void> {
    await this.pool.query('UPDATE executions SET tree_version = $2 WHERE exec_id = $1', [execId, version]);
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /**
   * One session for LISTEN (and the git poller's advisory lock, which dies
   * with it). A lost session is reopened with backoff (1 s doubling to 30 s,
   * one reopening at a time); `onReconnect` then lets the owner catch up on
   * what it may have missed. The first open's failure is the caller's.
   */
  async listen(onMessage: (channel: string, payload: string) => void, onReconnect: () => void): Promise<void> {
    const open = async (): Promise<void> => {
      const client = new pg.Client({ connectionString: this.url, application_name: `service daemon ${this.daemonId}`, keepAlive: true, connectionTimeoutMillis: 10_000 });
      let lost = false;
      const onLost = () => {
        if (lost) return;
        lost = true;
        if (this.listener !== client) return; // never established: the opener handles it
        this.listener = undefined;
        this.holdsGitLock = false;
        reopen(1000);
      };
      client.on('error', onLost);
      client.on('end', onLost);
      client.on('notification', (n) => onMessage(n.channel, n.payload ?? ''));
      try {
        await client.connect();
        await client.query(`LISTEN ${CANCEL_CHANNEL}; LISTEN ${FILES_CHANNEL}; LISTEN ${QUEUE_CHANNEL}`);
      } catch (err) {
        await client.end().catch(() => {});
        throw err;
      }
      if (lost || this.closed) {
        await client.end().catch(() => {});
        throw new Error('notification session lost while opening');
      }
      this.listener = client;
    };
    const reopen = (delayMs: number): void => {
      if (this.closed) return;
      setTimeout(() => {
        if (this.closed) return;
        open().then(onReconnect, () => reopen(Math.min(delayMs * 2, 30_000)));
      }, delayMs).unref();
    };
    await open();
  }

  /** True while this daemon holds the git poller's lock (taken here when free). */
  async gitLeader(): Promise<boolean> {
    if (this.holdsGitLock) return true;
    const l = this.listener;
    if (!l) return false;
    const r = await l.query('SELECT pg_try_advisory_lock($1) AS ok', [GIT_POLLER_LOCK]);
    // The session may have been lost (and replaced) while the query ran: the lock died with it.
    this.holdsGitLock = r.rows[0]?.ok === true && this.listener === l;
    return this.holdsGitLock;
  }

  async addOperatorToken(digest: string, label: string): Promise<void> {
    await this.pool.query('INSERT INTO operator_tokens (digest, label) VALUES ($1, $2)', [digest, label]);
  }

  async operatorTokenKnown(digest: string): Promise<boolean> {
    if (!/^[0-9a-f]{64}$/.test(digest)) return false;
    return ((await this.pool.query('SELECT 1 FROM operator_tokens WHERE digest = $1', [digest])).rowCount ?? 0) > 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.end().catch(() => {});
    await this.heartbeats?.close();
    await this.pool.end().catch(() => {});
  }
}
