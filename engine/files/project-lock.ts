/**
 * The per-project lock: file writes, deletes, renames and
 * git pulls of one project run one at a time, in arrival order. It is
 * re-entrant through AsyncLocalStorage so a caller holding it (the job layer's
 * check-then-write, a git pull) can call the tree's own locked operations
 * without deadlocking. Work a holder leaves running in the background after
 * its callback returns still counts as "inside" — holders must await it.
 *
 * `join` lets callers of one kind that queue back to back share a turn: while
 * the last request in the queue is a group of that kind that has not started,
 * a new caller joins it instead of queueing behind it. Nothing that arrived
 * later runs before it, and the group's runner handles its items one at a
 * time in arrival order, so the order holds.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';

const held = new AsyncLocalStorage<ReadonlySet<ProjectLock>>();

/**
 * Handles, under the lock, every item of a group in arrival order and
 * settles each one: one item's failure is its own.
 */
export type GroupRunner<I, R> = (items: readonly I[]) => Promise<PromiseSettledResult<R>[]>;

interface Member<I, R> {
  readonly item: I;
  readonly resolve: (value: R) => void;
  readonly reject: (reason: unknown) => void;
}

interface OpenGroup {
  readonly runner: GroupRunner<never, unknown>;
  readonly members: Member<never, unknown>[];
}

export class ProjectLock {
  private tail: Promise<void> = Promise.resolve();
  /** The group queued last, still open for joining (null once anything queues after it or it starts). */
  private open: OpenGroup | null = null;
  private waiting = 0;

  /** Callers holding the lock or queued for it (each member of a group counts); for tests and diagnostics. */
  get queued(): number {
    return this.waiting;
  }

  /** True when the current async context holds this lock. */
  isHeld(): boolean {
    return held.getStore()?.has(this) ?? false;
  }

  /** Runs `fn` once every earlier holder has finished; re-entrant. */
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.enqueue(fn, 1);
  }

  /** `run`, counting `weight` in `queued` (a group's members count themselves). */
  private async enqueue<T>(fn: () => Promise<T> | T, weight: number): Promise<T> {
    const current = held.getStore();
    if (current?.has(this)) return fn();
    this.open = null; // later joiners must not pass this caller
    this.waiting += weight;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await held.run(new Set([...(current ?? []), this]), fn);
    } finally {
      this.waiting -= weight;
      release();
    }
  }

  /**
   * Queues `item` for `runner` (a stable function: groups are per runner):
   * joins the group at the tail of the queue when it has the same runner and
   * has not started, else queues a new group. A caller already holding the
   * lock runs its item alone, at once.
   */
  join<I, R>(runner: GroupRunner<I, R>, item: I): Promise<R> {
    if (this.isHeld()) return runner([item]).then(only);
    return new Promise<R>((resolve, reject) => {
      let settled = false;
      const settle = (): void => {
        if (!settled) this.waiting--;
        settled = true;
      };
      this.waiting++;
      const member: Member<I, R> = {
        item,
        resolve: (value) => {
          settle();
          resolve(value);
        },
        reject: (reason) => {
          settle();
          reject(reason);
        },
      };
      if (this.open !== null && this.open.runner === (runner as unknown)) {
        (this.open.members as unknown as Member<I, R>[]).push(member);
        return;
      }
      const members: Member<I, R>[] = [member];
      const group: OpenGroup = { runner: runner as unknown as GroupRunner<never, unknown>, members: members as unknown as Member<never, unknown>[] };
      const done = this.enqueue(async () => {
        if (this.open === group) this.open = null; // closed: later callers queue behind it
        const results = await runner(members.map((m) => m.item));
        members.forEach((m, i) => {
          const r = results[i];
          if (r === undefined) m.reject(new Error('project lock group: no result for an item'));
          else if (r.status === 'fulfilled') m.resolve(r.value);
          else m.reject(r.reason);
        });
      }, 0);
      // `enqueue` cleared `open` synchronously; this group is now the tail.
      this.open = group;
      done.catch((err: unknown) => {
        for (const m of members) m.reject(err); // no-op for members already settled
      });
    });
  }
}

function only<R>(results: PromiseSettledResult<R>[]): R {
  const r = results[0];
  if (r === undefined) throw new Error('project lock group: no result for an item');
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

const locks = new Map<string, ProjectLock>();

/** The one lock of the project whose root is `root` (shared by every ProjectTree on it). */
export function projectLock(root: string): ProjectLock {
  const key = path.resolve(root);
  let lock = locks.get(key);
  if (lock === undefined) {
    lock = new ProjectLock();
    locks.set(key, lock);
  }
  return lock;
}
