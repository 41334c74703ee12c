/**
 * Automatic git pulls: every project whose git is
 * configured, enabled and has `poll_interval > 0` is pulled every
 * `poll_interval` seconds, through the same pull as `POST /project/git/pull`.
 * The first poll of a project runs at start, and at once after its URL,
 * branch or interval change. Settings are re-read from the store every
 * tick (5 s), so the operator's `service project update` is seen within 5 s
 * without a restart.
 *
 * States per project: idle (waiting for `dueAt`) → polling (one pull in
 * flight; a due time passing meanwhile starts no second one) → idle with
 * `dueAt` = end of the pull + interval. Stop aborts in-flight fetches and
 * waits for them.
 */
import { errorChain } from '../../engine/errors.js';
import type { GitPullResult, PullOptions } from '../../engine/git/index.js';
import type { Logger } from '../../engine/log.js';
import type { ProjectRecord, StateStore } from '../../engine/state/store.js';

export interface GitPollerDeps {
  readonly store: StateStore;
  readonly pull: (projectId: string, options: PullOptions) => Promise<GitPullResult>;
  readonly logger: Logger;
  /** How often settings are re-read and due polls started; default 5 s (`service project update` promises changes are seen within 5 s). */
  readonly tickMs?: number;
  /** Injected clock (epoch ms). */
  readonly now?: () => number;
  /**
   * No timer of its own: the owner calls `tick()` (tests drive the poller with
   * their clock instead of sleeping through real intervals).
   */
  readonly manual?: boolean;
  /** Cluster mode: polls start only while this resolves true (one daemon polls at a time). */
  readonly leader?: () => Promise<boolean>;
}

export interface PollState {
  /** The settings the schedule was made for: a change polls at once. */
  readonly key: string;
  readonly intervalMs: number;
  dueAt: number;
}

export const POLL_TICK_MS = 5_000;

function pollKey(p: ProjectRecord): string | null {
  const g = p.git;
  if (!g || g.url === '' || !g.enabled || g.poll_interval <= 0) return null;
  return JSON.stringify([g.url, g.branch, g.poll_interval]);
}

/**
 * The schedule after a look at the projects: new or changed ones are due
 * `now`, unchanged ones keep their due time, projects without polling drop
 * out. Returns the new schedule and the ids due at `now`.
 */
export function planPolls(projects: readonly ProjectRecord[], previous: ReadonlyMap<string, PollState>, now: number): { schedule: Map<string, PollState>; due: string[] } {
  const schedule = new Map<string, PollState>();
  const due: string[] = [];
  for (const p of projects) {
    const key = pollKey(p);
    if (key === null) continue;
    const prev = previous.get(p.id);
    const state = prev && prev.key === key ? prev : { key, intervalMs: p.git!.poll_interval * 1000, dueAt: now };
    schedule.set(p.id, state);
    if (state.dueAt <= now) due.push(p.id);
  }
  return { schedule, due };
}

export class GitPoller {
  readonly #deps: GitPollerDeps;
  #schedule = new Map<string, PollState>();
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #stopped = true;

  constructor(deps: GitPollerDeps) {
    this.#deps = deps;
  }

  #now(): number {
    return this.#deps.now?.() ?? Date.now();
  }

  start(): void {
    this.#stopped = false;
    this.#arm(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
    await this.#ticking;
    await Promise.allSettled(this.#inFlight.values());
  }

  /** Resolves once every poll started so far has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#inFlight.values());
  }

  #arm(ms: number): void {
    if (this.#deps.manual) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#ticking = this.tick().then(() => undefined, (err) => this.#deps.logger.log('error', `git poller: ${errorChain(err)}`));
    }, ms);
    this.#timer.unref();
  }

  /** Re-reads the settings and starts the polls that are due; returns their project ids. */
  async tick(): Promise<string[]> {
    if (this.#stopped) return [];
    const started: string[] = [];
    try {
      if (this.#deps.leader && !(await this.#deps.leader())) return started;
      const { schedule, due } = planPolls(await this.#deps.store.listProjects(), this.#schedule, this.#now());
      this.#schedule = schedule;
      for (const id of due) {
        if (this.#inFlight.has(id) || this.#stopped) continue;
        started.push(id);
        this.#inFlight.set(id, this.#poll(id, schedule.get(id)!));
      }
    } finally {
      if (!this.#stopped) this.#arm(this.#deps.tickMs ?? POLL_TICK_MS);
    }
    return started;
  }

  async #poll(projectId: string, state: PollState): Promise<void> {
    try {
      await this.#deps.pull(projectId, { signal: this.#abort.signal });
    } catch (err) {
      // The pull logged it and stored it in git.last_error; this only covers refusals before that (settings changed meanwhile).
      this.#deps.logger.log('debug', `git poll of project ${projectId}: ${errorChain(err)}`);
    } finally {
      state.dueAt = this.#now() + state.intervalMs;
      this.#inFlight.delete(projectId);
    }
  }
}
