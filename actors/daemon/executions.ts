/**
 * The daemon's executions: run requests with the job policy,
 * dispatch of queued executions (at most `maxRunning`, oldest first, one per
 * job), the work per job kind, cancellation, the final status, shutdown and
 * restart recovery. The store is the source of truth: a terminal record
 * never changes, so results that arrive after a cancel are dropped there.
 *
 * States of one execution (store-enforced):
 *   queued → running → success | warning | error | skipped | cancelled
 *   queued → cancelled | skipped;  running → interrupted (only at start)
 */
import { registryAtWorkingDir, type ConnectionRegistry } from '../../engine/connections/index.js';
import { registryWithSessionTag, sessionTag } from '../../engine/targets/session-tag.js';
import { EngineError, errorChain } from '../../engine/errors.js';
import { isConnectionLoss } from '../../engine/targets/postgres/pg-guard.js';
import type { Logger } from '../../engine/log.js';
import type { ExecutionRecord, ExecutionStatus, JobRecord, StateStore, Trigger } from '../../engine/state/store.js';
import type { TaskPool } from '../pool.js';
import type { LineRouter } from './line-router.js';
import type { LoadedJobFile } from '../../engine/daemon-projects/load-job-file.js';
import { kindRunner, type KindContext } from './job-kinds.js';
import { startTasks, type TaskOutcome } from './task-runner.js';


export interface ExecutionDeps {
  readonly store: StateStore;
  readonly pool: TaskPool;
  readonly logger: Logger;
  readonly maxRunning: number;
  /** Identifies this daemon's claims in a shared store. */
  readonly owner: string;
  /**
   * Recovery marks every running execution interrupted (a store only this daemon uses);
   * otherwise only those claimed by `owner` (a shared PostgreSQL store).
   */
  readonly recoverAll?: boolean;
  readonly connections: (projectId: string) => ConnectionRegistry;
  readonly loadJobFile: (projectId: string, fileName: string) => Promise<LoadedJobFile>;
  /** Lookup after run and job vars: the project env file, the host env file, the process environment. */
  readonly envLookup: (projectId: string) => (name: string) => string | undefined;
  readonly lines: LineRouter;
  /** The project root (`<data-dir>/projects/<id>/files`); pipelines need it. */
  readonly projectRoot?: (projectId: string) => string;
  /** `--allow-command-steps`: pipeline `command` steps run only when true. */
  readonly allowCommandSteps?: boolean;
  /** Cluster mode: brings the project's files up to date before a run (and records their version). */
  readonly prepare?: (exec: ExecutionRecord) => Promise<void>;
  /** Cluster mode: tells the other daemons an execution was cancelled, so whichever runs it stops. */
  readonly onCancelled?: (execId: string) => Promise<void>;
  /** Cluster mode: tells the other daemons an execution was queued, so an idle one can claim it. */
  readonly onQueued?: () => Promise<void>;
}

export interface RunOverrides {
  readonly streams?: readonly string[];
  readonly mode?: string;
  readonly select?: readonly string[];
  readonly vars?: Readonly<Record<string, unknown>>;
}

const now = () => new Date().toISOString();
const TERMINAL_ON_CANCEL = 'cancelled by request';

interface Running {
  readonly exec: ExecutionRecord;
  /** Stops the execution's work (task kinds: the supervisor's cancel; step kinds: an abort). */
  stop?: () => void;
  /** Set when stopped from outside before `stop` existed; checked once it does. */
  stopped?: boolean;
  finished: Promise<void>;
}

export class ExecutionService {
  readonly #deps: ExecutionDeps;
  readonly #running = new Map<string, Running>();
  #dispatching = false;
  #again = false;
  #stopped = false;
  #fenced = false;

  constructor(deps: ExecutionDeps) {
    this.#deps = deps;
  }

  /** Executions this daemon left running are interrupted. */
  async recover(): Promise<string[]> {
    const { store, owner, recoverAll } = this.#deps;
    return store.markRunningInterrupted(now(), 'the daemon stopped while the execution was running', recoverAll === false ? owner : undefined);
  }

  /**
   * Creates the execution (queued or skipped) and returns its id.
   * `scheduleDue`: the schedule claim it fulfils (see StateStore.createExecution).
   */
  async requestRun(job: JobRecord, overrides: RunOverrides, trigger: Trigger, scheduleDue?: string): Promise<string> {
    const { store } = this.#deps;
    const active = await store.activeExecutions(job.id);
    const base = { project_id: job.project_id, job_id: job.id, job_name: job.name, job_type: job.type, file_name: job.file_name, trigger, overrides: { ...overrides } };
    if (job.policy === 'skip' && active.length > 0) {
      const t = now();
      const exec = await store.createExecution({ ...base, status: 'skipped', error: `job ${job.id} already has an active execution ${active[0]!.exec_id}`, start_time: t, end_time: t }, { scheduleDue });
      this.#deps.logger.log('info', `execution ${exec.exec_id} skipped (job ${job.id}): ${exec.error}`);
      return exec.exec_id;
    }
    const exec = await store.createExecution({ ...base, start_time: now() }, { scheduleDue });
    this.#deps.logger.log('info', `execution ${exec.exec_id} queued (job ${job.id}, ${trigger})`);
    if (job.policy === 'cancel') {
      for (const a of active) await this.#cancelExecution(a, `cancelled by a newer run ${exec.exec_id}`);
    }
    this.dispatch();
    await this.#deps.onQueued?.().catch((err) => this.#deps.logger.log('error', `execution ${exec.exec_id}: could not tell the cluster it is queued: ${errorChain(err)}`));
    return exec.exec_id;
  }

  /** Queued → cancelled at once; running → cancelled record, then the work is stopped. */
  async cancel(projectId: string, execId: string): Promise<ExecutionRecord> {
    const exec = await this.#deps.store.getExecution(projectId, execId);
    if (!exec) throw new EngineError('not_found', `execution ${execId} not found`);
    if (exec.status !== 'queued' && exec.status !== 'running') {
      throw new EngineError('conflict', `execution ${execId} is not running or queued (status: ${exec.status})`);
    }
    await this.#cancelExecution(exec, TERMINAL_ON_CANCEL);
    return (await this.#deps.store.getExecution(projectId, execId))!;
  }

  async #cancelExecution(exec: ExecutionRecord, reason: string): Promise<void> {
    const { store } = this.#deps;
    const t = now();
    const changed = await store.updateExecution(exec.exec_id, { status: 'cancelled', error: reason, end_time: t });
    await store.finishActive(exec.exec_id, 'cancelled', t);
    if (changed) this.#deps.logger.log('info', `execution ${exec.exec_id} cancelled (job ${exec.job_id}): ${reason}`);
    if (!this.stopLocal(exec.exec_id) && changed) {
      await this.#deps.onCancelled?.(exec.exec_id).catch((err) => this.#deps.logger.log('error', `execution ${exec.exec_id}: could not tell the cluster of its cancel: ${errorChain(err)}`));
    }
  }

  /**
   * Stops the work of an execution this daemon runs (its record already
   * terminal: a cancel through another daemon, or a takeover); false when it
   * does not run here.
   */
  stopLocal(execId: string): boolean {
    const entry = this.#running.get(execId);
    if (!entry) return false;
    entry.stopped = true;
    entry.stop?.();
    return true;
  }

  /**
   * Cluster mode, this daemon was fenced: stop everything it runs and write
   * nothing more — a survivor owns those records now (and the database
   * refuses this daemon's writes to them anyway).
   */
  fence(): void {
    this.#stopped = true;
    this.#fenced = true;
    for (const id of this.#running.keys()) this.stopLocal(id);
  }

  /** True while a claim is in flight (its answer may not have arrived yet). */
  get claiming(): boolean {
    return this.#dispatching;
  }

  /**
   * `claimed`: executions the store says run here. Those that do not — a
   * claim committed whose answer was lost with a dropped connection — end in
   * `error`, so none stays `running` under a live daemon. Call only while no
   * claim is in flight (`claiming`), with a list read meanwhile.
   */
  async reconcile(claimed: readonly string[]): Promise<void> {
    for (const id of claimed) {
      if (this.#running.has(id) || this.#fenced) continue;
      const changed = await this.#deps.store.updateExecution(id, { status: 'error', error: 'the daemon lost the answer to its claim of this execution (a dropped connection to the state store); it never started', end_time: now() });
      if (changed) {
        await this.#deps.store.finishActive(id, 'cancelled', now());
        this.#deps.logger.log('warn', `execution ${id} error: its claim's answer was lost with a dropped connection to the state store`);
      }
    }
  }

  /** Claims and starts queued executions while slots are free. Re-entrant calls coalesce. */
  dispatch(): void {
    if (this.#stopped) return;
    if (this.#dispatching) {
      this.#again = true;
      return;
    }
    this.#dispatching = true;
    void (async () => {
      try {
        do {
          this.#again = false;
          while (!this.#stopped && this.#running.size < this.#deps.maxRunning) {
            const exec = await this.#deps.store.claimNextQueued({ maxRunning: this.#deps.maxRunning, owner: this.#deps.owner });
            if (!exec) break;
            this.#start(exec);
          }
        } while (this.#again && !this.#stopped);
      } catch (err) {
        this.#deps.logger.log('error', `dispatch failed: ${errorChain(err)}`);
      } finally {
        this.#dispatching = false;
      }
    })();
  }

  #start(exec: ExecutionRecord): void {
    const entry: Running = { exec, finished: Promise.resolve() };
    this.#running.set(exec.exec_id, entry);
    this.#deps.logger.log('info', `execution ${exec.exec_id} running (job ${exec.job_id})`);
    entry.finished = this.#run(entry)
      .catch((err) => this.#finish(exec, 'error', errorChain(err)))
      .catch((err) => {
        if (!this.#fenced) this.#deps.logger.log('error', `execution ${exec.exec_id} failed: ${errorChain(err)}`);
      })
      .finally(() => {
        this.#running.delete(exec.exec_id);
        this.#deps.lines.output.forget(exec.exec_id);
        this.dispatch();
      });
  }

  /** Run vars over the job's config.vars over the env layers. */
  #lookup(exec: ExecutionRecord, job: JobRecord | undefined): (name: string) => string | undefined {
    const runVars = (exec.overrides?.vars ?? {}) as Record<string, unknown>;
    const jobVars = (job?.config.vars ?? {}) as Record<string, unknown>;
    const env = this.#deps.envLookup(exec.project_id);
    return (name) => {
      for (const vars of [runVars, jobVars]) if (Object.prototype.hasOwnProperty.call(vars, name)) return String(vars[name]);
      return env(name);
    };
  }

  async #run(entry: Running): Promise<void> {
    const { store } = this.#deps;
    const exec = entry.exec;
    await this.#deps.prepare?.(exec);
    const loaded: LoadedJobFile = await this.#deps.loadJobFile(exec.project_id, exec.file_name);
    if (!loaded.ok) return this.#finish(exec, 'error', loaded.error);
    const runner = kindRunner(loaded.file.kind);
    if (!runner) return this.#finish(exec, 'error', `${loaded.file.kind} jobs cannot run yet in this version`);
    const job = await store.getJob(exec.project_id, exec.job_id);
    // config.timeout: past it the execution is stopped like a cancel (statements cancelled in the
    // database) but ends in `error`; the store keeps the first terminal status it is given.
    const limit = job?.config.timeout ?? 0;
    const timer = limit > 0 ? setTimeout(() => void this.#timeOut(entry, limit), limit * 1000) : undefined;
    try {
      await this.#execute(entry, loaded, runner, job);
    } finally {
      clearTimeout(timer);
    }
  }

  async #timeOut(entry: Running, seconds: number): Promise<void> {
    const { store, logger } = this.#deps;
    const t = now();
    try {
      const changed = await store.updateExecution(entry.exec.exec_id, { status: 'error', error: `execution timed out after ${seconds} s`, end_time: t });
      if (!changed) return; // it ended meanwhile
      await store.finishActive(entry.exec.exec_id, 'cancelled', t);
      logger.log('warn', `execution ${entry.exec.exec_id} timed out after ${seconds} s: stopping its work`);
      entry.stop?.();
    } catch (err) {
      logger.log('error', `execution ${entry.exec.exec_id}: could not stop it at its timeout: ${errorChain(err)}`);
    }
  }

  async #execute(entry: Running, loaded: LoadedJobFile & { ok: true }, runner: NonNullable<ReturnType<typeof kindRunner>>, job: JobRecord | undefined): Promise<void> {
    const { store } = this.#deps;
    const exec = entry.exec;
    // A job's working directory is its project root: relative duckdb:// paths resolve there.
    const root = this.#deps.projectRoot?.(exec.project_id);
    const registry = this.#deps.connections(exec.project_id);
    const ctx: KindContext = {
      exec,
      job,
      store,
      pool: this.#deps.pool,
      lines: this.#deps.lines,
      logger: this.#deps.logger,
      connections: registryWithSessionTag(root === undefined ? registry : registryAtWorkingDir(registry, root), sessionTag(exec.exec_id)),
      lookup: this.#lookup(exec, job),
      projectRoot: root,
      allowCommandSteps: this.#deps.allowCommandSteps ?? false,
    };
    const stillRunning = async () => (await store.findExecution(exec.exec_id))?.status === 'running';
    if (runner.style === 'steps') {
      const ac = new AbortController();
      entry.stop = () => ac.abort();
      if (!(await stillRunning())) ac.abort();
      const o = await runner.run(loaded.file, ctx, ac.signal);
      await store.updateExecution(exec.exec_id, { rows: o.rows, bytes: o.bytes, ...(o.build !== undefined ? { build: o.build } : {}) });
      return this.#finish(exec, o.status, o.error);
    }
    const works = await runner.tasks(loaded.file, ctx);
    if (works.length === 0) return this.#finish(exec, 'skipped', 'nothing to do: no tasks');
    const handle = await startTasks(store, exec.exec_id, works, runner.threads(ctx), this.#deps.lines.output);
    entry.stop = () => handle.cancel();
    // A cancel that landed before the handle existed found nothing to stop.
    if (!(await stillRunning())) handle.cancel();
    const outcomes = await handle.done;
    await store.updateExecution(exec.exec_id, { rows: outcomes.reduce((a, o) => a + o.rows, 0), bytes: outcomes.reduce((a, o) => a + o.bytes, 0) });
    const names = new Map(works.map((w) => [w.taskId, w.streamName]));
    const failed = outcomes.filter((o) => o.status === 'error');
    const status: ExecutionStatus =
      failed.length > 0
        ? 'error'
        : outcomes.some((o) => o.status === 'warning')
          ? 'warning'
          : outcomes.every((o) => o.status === 'cancelled')
            ? 'cancelled'
            : outcomes.every((o) => o.status === 'skipped')
              ? 'skipped'
              : 'success';
    return this.#finish(exec, status, failed.length > 0 ? summary(failed, names) : status === 'skipped' ? 'nothing to do: every task was skipped' : null);
  }

  async #finish(exec: ExecutionRecord, status: ExecutionStatus, error: string | null): Promise<void> {
    if (this.#fenced) return; // a survivor owns the record now
    const t = now();
    const changed = await this.#persist(exec.exec_id, () => this.#deps.store.updateExecution(exec.exec_id, { status, error, end_time: t }));
    if (changed) {
      await this.#persist(exec.exec_id, () => this.#deps.store.finishActive(exec.exec_id, 'cancelled', t));
      this.#deps.logger.log('info', `execution ${exec.exec_id} ${status}${error ? `: ${error}` : ''}`);
    }
  }

  /**
   * An execution's end must reach the store, or the record stays `running`
   * under a live daemon that no survivor takes over: a write that failed
   * because the connection was lost is tried again on a new one (0.25 s
   * doubling to 5 s, for up to about two minutes; a few times only once the
   * daemon is stopping). Statement errors (the
   * record refused, a fenced daemon) fail at once.
   */
  async #persist<T>(execId: string, write: () => Promise<T>): Promise<T> {
    for (let attempt = 0, delay = 250; ; attempt++, delay = Math.min(delay * 2, 5000)) {
      try {
        return await write();
      } catch (err) {
        // Shutting down: a few quick tries only, so a stop is not held for minutes.
        if (!isConnectionLoss(err) || attempt >= (this.#stopped ? 3 : 30) || this.#fenced) throw err;
        if (attempt === 0) this.#deps.logger.log('warn', `execution ${execId}: recording its end failed (${errorChain(err)}); trying again`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Shutdown: stop dispatching, wait up to `graceMs`, then cancel what still runs. */
  async shutdown(graceMs: number): Promise<void> {
    this.#stopped = true;
    const all = () => Promise.all([...this.#running.values()].map((r) => r.finished));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([all().then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    clearTimeout(timer);
    if (timedOut) {
      await this.cancelAll('cancelled: daemon shutdown');
      await all();
    }
  }

  /**
   * Stops waiting at once (a second signal): cancels everything running now.
   * When the store refuses the record (a fenced cluster daemon), the work is
   * still stopped here.
   */
  async cancelAll(reason: string): Promise<void> {
    if (this.#fenced) return; // fence() stopped the work; the records are a survivor's now
    for (const r of this.#running.values()) {
      try {
        await this.#cancelExecution(r.exec, reason);
      } catch (err) {
        this.#deps.logger.log('error', `execution ${r.exec.exec_id}: could not record its cancel: ${errorChain(err)}`);
        this.stopLocal(r.exec.exec_id);
      }
    }
  }

  get runningCount(): number {
    return this.#running.size;
  }

  /** Ids of the executions this daemon runs now. */
  runningIds(): string[] {
    return [...this.#running.keys()];
  }
}

/** `<stream_name or step_id>: <message>` for the first failure, `(and <n> more)` for others. */
function summary(failed: readonly TaskOutcome[], names: ReadonlyMap<string, string>): string {
  const first = `${names.get(failed[0]!.taskId) ?? failed[0]!.taskId}: ${failed[0]!.error?.message ?? 'failed'}`;
  return failed.length > 1 ? `${first} (and ${failed.length - 1} more)` : first;
}
