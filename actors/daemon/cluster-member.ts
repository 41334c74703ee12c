/**
 * This daemon's part in a cluster (docs/cluster.md): it registers itself,
 * renews its lease every third of the lease (on a session and a timer of
 * their own), and as often, on another timer, takes over
 * what dead daemons left running (terminating their database sessions and
 * temporary tables), and brings project files up to date. Notifications
 * stop a cancelled execution that runs here and sync a changed project at
 * once; the beat is the safety net for a notification lost with a dropped
 * connection.
 *
 * States: starting → member (beating) → stopped (graceful: the row says so,
 * nothing is taken over) | fenced (a survivor took this daemon over: its
 * work is stopped at once and the owner is told, to exit).
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import { CANCEL_CHANNEL, FILES_CHANNEL, QUEUE_CHANNEL, type ClusterDb, type DaemonInfo } from '../../engine/cluster/cluster-db.js';
import type { FileSync } from '../../engine/cluster/file-sync.js';
import { errorChain } from '../../engine/errors.js';
import type { Logger } from '../../engine/log.js';
import type { ExecutionService } from './executions.js';
import { cleanUpInterrupted } from './recovery-cleanup.js';

export interface ClusterMemberDeps {
  readonly db: ClusterDb;
  readonly files: FileSync;
  readonly info: DaemonInfo;
  readonly logger: Logger;
  readonly connections: (projectId: string) => ConnectionRegistry;
  readonly executions: ExecutionService;
  /** This daemon was fenced: its owner should stop it. */
  readonly onFenced: () => void;
  /** Fires a due time another daemon claimed but died before running (the job may be gone). */
  readonly fireOrphan: (jobId: string, due: string) => Promise<void>;
}

export class ClusterMember {
  readonly #deps: ClusterMemberDeps;
  #beatTimer: NodeJS.Timeout | undefined;
  #dutyTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> = Promise.resolve();
  #duties: Promise<void> | undefined;
  #state: 'starting' | 'member' | 'stopped' | 'fenced' = 'starting';
  /** Database time of the last renewal that went through. */
  #lastBeatAt: Date | undefined;
  /**
   * Database time since when this daemon's renewals went through without a
   * gap longer than its lease (null until the first one): it may judge
   * others only for the time it was itself renewing (ClusterDb.fenceDead).
   */
  #beatingSince: Date | null = null;

  constructor(deps: ClusterMemberDeps) {
    this.#deps = deps;
  }

  /** Registers, takes over this node's earlier (dead) starts and brings every project's files up to date. */
  async start(): Promise<void> {
    const { db, info, files } = this.#deps;
    await db.register(info);
    await db.prune();
    await db.listen(
      (channel, payload) => this.#onMessage(channel, payload),
      () => void files.syncAll().catch((err) => this.#deps.logger.log('error', `file sync after reconnecting failed: ${errorChain(err)}`)),
    );
    await this.#renew();
    await this.#takeOver();
    await files.syncAll();
    this.#state = 'member';
    const period = Math.max(50, Math.floor(info.leaseMs / 3));
    // Renewals have a timer (and a database session) of their own: a slow takeover, file
    // sync or dispatch never delays them.
    this.#beatTimer = setInterval(() => {
      this.#beating = this.#beating.then(() => this.#beat());
    }, period);
    this.#beatTimer.unref();
    this.#dutyTimer = setInterval(() => {
      this.#duties ??= this.#runDuties().finally(() => (this.#duties = undefined));
    }, period);
    this.#dutyTimer.unref();
  }

  #onMessage(channel: string, payload: string): void {
    const { logger, executions, files } = this.#deps;
    if (channel === CANCEL_CHANNEL) {
      if (executions.stopLocal(payload)) logger.log('info', `execution ${payload} cancelled through another daemon: stopping its work`);
    } else if (channel === QUEUE_CHANNEL) {
      executions.dispatch();
    } else if (channel === FILES_CHANNEL) {
      const projectId = payload.split(':')[0]!;
      files.sync(projectId).catch((err) => logger.log('error', `project ${projectId}: file sync failed: ${errorChain(err)}`));
    }
  }

  /** One renewal; false when this daemon was fenced. Tracks the gap-free stretch of renewals. */
  async #renew(): Promise<boolean> {
    const { db, info } = this.#deps;
    const r = await db.heartbeat(Math.max(100, Math.floor(info.leaseMs / 3)));
    if (r.fenced) return false;
    const last = this.#lastBeatAt;
    if (last === undefined || this.#beatingSince === null || r.at.getTime() - last.getTime() > info.leaseMs) this.#beatingSince = r.at;
    this.#lastBeatAt = r.at;
    return true;
  }

  async #beat(): Promise<void> {
    if (this.#state !== 'member') return;
    const { logger } = this.#deps;
    try {
      if (!(await this.#renew())) this.#fenced();
    } catch (err) {
      logger.log('error', `cluster heartbeat failed: ${errorChain(err)}`);
    }
  }

  /** Fenced: one line, the work stopped at once, the owner told (it exits). */
  #fenced(): void {
    if (this.#state === 'fenced') return;
    this.#state = 'fenced';
    clearInterval(this.#beatTimer);
    clearInterval(this.#dutyTimer);
    this.#deps.logger.log('error', `daemon ${this.#deps.info.id} lost its lease (it did not heartbeat for ${this.#deps.info.leaseMs} ms) and was taken over: stopping its executions and exiting`);
    this.#deps.executions.fence();
    this.#deps.onFenced();
  }

  /** What each beat also does: takeovers, lost notifications, file versions, queued work. */
  async #runDuties(): Promise<void> {
    if (this.#state !== 'member') return;
    const { db, logger, executions, files } = this.#deps;
    try {
      await this.#takeOver();
      // A cancel notification lost with a dropped connection: the record says so, stop the work.
      for (const id of await db.notRunning(executions.runningIds())) {
        if (executions.stopLocal(id)) logger.log('info', `execution ${id} ended through another daemon: stopping its work`);
      }
      // A claim whose answer was lost with a dropped connection: running in the store under
      // this daemon's name, but not here. Read while no claim is in flight, so a claim that
      // is being answered right now is not mistaken for one.
      if (!executions.claiming) {
        const claimed = await db.runningClaimedBy();
        if (!executions.claiming) await executions.reconcile(claimed);
      }
      await files.syncAll();
      // A queue notification lost with a dropped connection costs at most one beat.
      executions.dispatch();
    } catch (err) {
      if (this.#state === 'member') logger.log('error', `cluster duties failed: ${errorChain(err)}`);
    }
  }

  async #takeOver(): Promise<void> {
    const { db, info, logger, connections, executions } = this.#deps;
    const dead = await db.fenceDead(info.node, this.#beatingSince, this.#lastBeatAt ?? null);
    for (const id of dead) logger.log('warn', `daemon ${id} stopped heartbeating: taking over its executions`);
    for (const o of await db.orphanClaims()) {
      logger.log('warn', `schedule of job ${o.jobId} due ${o.due} was claimed by a daemon that died before running it: running it here`);
      await this.#deps.fireOrphan(o.jobId, o.due).catch((err) => logger.log('error', `scheduled run of ${o.jobId} failed: ${errorChain(err)}`));
    }
    const taken = await db.takeOver(info.id);
    if (taken.length === 0) return;
    for (const t of taken) logger.log('warn', `execution ${t.exec_id} ${t.outcome === 'requeued' ? 're-queued (the job allows retries)' : 'interrupted'}: the daemon running it is gone`);
    await cleanUpInterrupted(taken, connections, logger);
    if (taken.some((t) => t.outcome === 'requeued')) executions.dispatch();
  }

  /** Graceful: the row is marked stopped (nobody takes over a daemon that said goodbye). */
  async stop(): Promise<void> {
    clearInterval(this.#beatTimer);
    clearInterval(this.#dutyTimer);
    await this.#beating;
    await this.#duties;
    if (this.#state === 'member') await this.#deps.db.markStopped().catch(() => {});
    this.#state = 'stopped';
  }
}
