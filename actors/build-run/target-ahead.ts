/**
 * A build pool started before the build knows its nodes: the CLI reads the
 * target connection from the config alone (engine/build-plan/peek-target.ts) and
 * starts the worker threads, which load the build handler and connect to the
 * target while the main thread loads modules and compiles the project. The
 * first node then waits neither for a thread's start-up nor for the
 * connection handshakes. The run borrows the pool when its resolved
 * connection is the same (open-pool-runner.ts); the opener closes it.
 */
import type { Connection } from '../../engine/connections/connection.js';
import { buildTaskPool } from './build-task-pool.js';
import type { TaskPool } from '../pool.js';

export interface TargetAhead {
  readonly connection: Connection;
  /** The run's worker pool, its workers connected (or connecting) to `connection`. */
  readonly pool: TaskPool;
  /**
   * Settles once the first connections (up to MAX_AHEAD) are open and idle
   * in the workers' pools; rejects with the connect error (`could not connect to '<t>'`),
   * which the run reports instead of connecting again.
   */
  readonly ready: Promise<void>;
  /** Stops the pool's threads (their connections close with them). */
  close(): Promise<void>;
}

/**
 * Connections opened ahead: the run's slots up to this many. The node count
 * is not known yet, and a large --threads on a small project should not
 * fork a backend per slot for nothing; the workers open the rest on demand.
 */
const MAX_AHEAD = 8;

export function openTargetAhead(connection: Connection, sessions: number): TargetAhead {
  const pool = buildTaskPool(sessions);
  // One setup task per slot, run at once: each holds a session while the others connect, so the workers' pools fill.
  const ready = Promise.all(Array.from({ length: Math.min(sessions, MAX_AHEAD) }, () => pool.run({ type: 'build.setup', connection, schemas: [] }))).then(() => undefined);
  ready.catch(() => {}); // observed by the run, or by nobody when the run never starts
  return { connection, pool, ready, close: () => pool.destroy() };
}

/** Same connection settings (the peeked connection may differ from the resolved one). */
export function sameConnection(a: Connection, b: Connection): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
