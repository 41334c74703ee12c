/**
 * The worker pool of a PostgreSQL build (open-pool-runner.ts sends every node
 * here) with `threads` slots. A node task sends a few statements and then
 * waits on the database (a seed parses its file, then waits on COPY), so a
 * thread serves several slots at once: one core is left to the main thread
 * and the rest share the slots (on 2 cores, one worker runs 4 slots).
 * Threads live for the whole run (an idle thread stopped and restarted
 * costs its start-up again).
 */
import { availableParallelism } from 'node:os';
import { TaskPool } from '../pool.js';

export function buildTaskPool(threads: number): TaskPool {
  const slots = Math.max(1, threads);
  const workers = Math.min(slots, Math.max(1, availableParallelism() - 1));
  return new TaskPool({ maxThreads: workers, minThreads: workers, idleTimeout: Number.POSITIVE_INFINITY, concurrentTasksPerWorker: Math.ceil(slots / workers), preload: ['build.node', 'build.setup'] });
}
