/**
 * The per-project lock of spec api.md §2.8: file writes, deletes, renames and
 * git pulls of one project run one at a time, in arrival order. It is
 * re-entrant through AsyncLocalStorage so a caller holding it (the job layer's
 * check-then-write, a git pull) can call the tree's own locked operations
 * without deadlocking. Work a holder leaves running in the background after
 * its callback returns still counts as "inside" — holders must await it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';

const held = new AsyncLocalStorage<ReadonlySet<ProjectLock>>();

export class ProjectLock {
  private tail: Promise<void> = Promise.resolve();

  /** True when the current async context holds this lock. */
  isHeld(): boolean {
    return held.getStore()?.has(this) ?? false;
  }

  /** Runs `fn` once every earlier holder has finished; re-entrant. */
  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const current = held.getStore();
    if (current?.has(this)) return fn();
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await held.run(new Set([...(current ?? []), this]), fn);
    } finally {
      release();
    }
  }
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
