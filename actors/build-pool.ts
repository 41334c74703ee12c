/**
 * The worker pool of a PostgreSQL build with `threads` slots. A node task
 * mostly waits on the server, so a thread serves several slots at once; one
 * core is left to the main thread (supervisor, progress) and the rest share
 * the slots: on 2 cores, one worker runs 4 slots. Threads live for the whole
 * run (an idle thread stopped and restarted costs its start-up again).
 * bench/ measured 1,000 trivial models on 2 cores: 4 threads × 1 slot spent
 * ~5 s of CPU, 1 thread × 4 slots ~3 s, with the wall time following.
 *
 * Its own small module: the CLI imports it to start the threads before it
 * loads the rest of the build.
 */
import { availableParallelism } from 'node:os';
import { TaskPool } from './pool.js';

export function buildTaskPool(threads: number): TaskPool {
  const slots = Math.max(1, threads);
  const workers = Math.min(slots, Math.max(1, availableParallelism() - 1));
  return new TaskPool({ maxThreads: workers, minThreads: workers, idleTimeout: Number.POSITIVE_INFINITY, concurrentTasksPerWorker: Math.ceil(slots / workers), preload: ['build.setup', 'build.node'] });
}
