/**
 * Fires scheduled jobs: every active job with schedules runs
 * when one of its expressions matches, evaluated in the job's timezone. The
 * scheduler sleeps until the earliest next fire (at most a minute) and fires
 * everything due since its last look; a job change wakes it at once
 * (`refresh`, called by the store wrapper `refreshOnJobChange`), so a new
 * schedule's first fire is on time;
 * fires missed while the daemon was down are not made up.
 */
import { errorChain } from '../../engine/errors.js';
import type { Logger } from '../../engine/log.js';
import { nextRun } from '../../engine/jobs/cron.js';
import type { JobRecord, StateStore } from '../../engine/state/store.js';

export interface SchedulerDeps {
  readonly store: StateStore;
  /** Fires the job for its due time `due`. */
  readonly run: (job: JobRecord, due: Date) => Promise<unknown>;
  readonly logger: Logger;
  readonly now?: () => Date;
  /**
   * Cluster mode: the one claim of a job's due time across the daemons; a
   * job fires here only when this resolves true. Without it every due time fires.
   */
  readonly claim?: (job: JobRecord, due: Date) => Promise<boolean>;
  /** Scheduler-clock milliseconds per real millisecond (1; tests compress time with `now`). */
  readonly clockRate?: number;
}

const MAX_SLEEP_MS = 60_000;

/** Jobs with a fire in (since, now]: active, scheduled, evaluated in their own timezone. */
export function dueJobs(jobs: readonly JobRecord[], since: Date, now: Date): JobRecord[] {
  return jobs.filter((job) => {
    if (!job.active || job.schedules.length === 0) return false;
    const due = nextRun(job.schedules, job.timezone, since);
    return due !== null && due.getTime() <= now.getTime();
  });
}

export class Scheduler {
  readonly #deps: SchedulerDeps;
  #timer: NodeJS.Timeout | undefined;
  #since: Date;
  #stopped = true;
  #ticking: Promise<void> = Promise.resolve();
  #wake: Date | undefined;

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
    this.#since = this.#now();
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date();
  }

  start(): void {
    this.#stopped = false;
    this.#since = this.#now();
    this.#arm(0);
  }

  /** Re-evaluates now (a job was saved, activated, deactivated or deleted). */
  refresh(): void {
    if (!this.#stopped) this.#arm(0);
  }

  /** When (scheduler clock) the last tick planned the next one: the earliest next fire, at most a minute on. */
  get nextWake(): Date | undefined {
    return this.#wake;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#ticking;
  }

  #arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // One tick at a time: a refresh during a tick runs after it, from the `since` it leaves
      // (two ticks from the same `since` would fire the same due time twice).
      this.#ticking = this.#ticking
        .then(() => this.tick())
        .then(() => undefined)
        .catch((err) => this.#deps.logger.log('error', `scheduler: ${errorChain(err)}`));
    }, ms);
    this.#timer.unref();
  }

  /** Fires jobs due in (since, now] and sleeps until the next fire; returns the fired job ids. */
  async tick(): Promise<string[]> {
    const fired: string[] = [];
    if (this.#stopped) return fired;
    const now = this.#now();
    let earliest = now.getTime() + MAX_SLEEP_MS;
    for (const project of await this.#deps.store.listProjects()) {
      const jobs = await this.#deps.store.listJobs(project.id);
      for (const job of dueJobs(jobs, this.#since, now)) {
        const due = nextRun(job.schedules, job.timezone, this.#since)!;
        if (this.#deps.claim && !(await this.#deps.claim(job, due).catch((err) => (this.#deps.logger.log('error', `schedule claim of ${job.id} failed: ${errorChain(err)}`), false)))) continue;
        this.#deps.logger.log('info', `schedule fired for job ${job.id}`);
        fired.push(job.id);
        await this.#deps.run(job, due).catch((err) => this.#deps.logger.log('error', `scheduled run of ${job.id} failed: ${errorChain(err)}`));
      }
      for (const job of jobs) {
        const next = job.active ? nextRun(job.schedules, job.timezone, now) : null;
        if (next) earliest = Math.min(earliest, next.getTime());
      }
    }
    this.#since = now;
    this.#wake = new Date(earliest);
    if (!this.#stopped) this.#arm(Math.max(0, earliest - this.#now().getTime()) / (this.#deps.clockRate ?? 1));
    return fired;
  }
}

/** The store methods that change what the scheduler reads. */
const JOB_CHANGES = new Set(['createJob', 'replaceJob', 'deleteJob']);

/**
 * `store` whose job changes (create, replace — a save, an activation —,
 * delete), whoever makes them (the job and file APIs, git pulls, the web
 * console), call `onChange` once they succeeded.
 */
export function refreshOnJobChange(store: StateStore, onChange: () => void): StateStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (typeof key !== 'string' || !JOB_CHANGES.has(key)) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        onChange();
        return out;
      };
    },
  });
}
