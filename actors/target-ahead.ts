/**
 * A target opened before the build knows its nodes: the CLI reads the target
 * connection from the config alone (engine/build/peek-target.ts) and starts
 * connecting while it loads modules and compiles the project, so the first
 * node does not wait for `threads` connection handshakes. The run borrows it
 * when its resolved connection is the same (multi-writer-runner.ts); the
 * opener closes it.
 */
import type { Connection } from '../engine/connections/connection.js';
import { openTarget, type Target } from '../engine/targets/index.js';

export interface TargetAhead {
  readonly connection: Connection;
  readonly target: Target;
  /**
   * Settles once the first connections (up to MAX_AHEAD) are open and idle
   * in the target's pool; rejects with the connect error (`could not connect to '<t>'`),
   * which the run reports instead of connecting again.
   */
  readonly ready: Promise<void>;
}

/**
 * Connections opened ahead: the run's slots up to this many. The node count
 * is not known yet, and a large --threads on a small project should not
 * fork a backend per slot for nothing; the pool opens the rest on demand.
 */
const MAX_AHEAD = 8;

export function openTargetAhead(connection: Connection, sessions: number): TargetAhead {
  const target = openTarget(connection, { poolSize: sessions });
  const ready = Promise.all(
    Array.from({ length: Math.min(sessions, MAX_AHEAD) }, async () => {
      const session = await target.open();
      await session.close();
    }),
  ).then(() => undefined);
  ready.catch(() => {}); // observed by the run, or by nobody when the run never starts
  return { connection, target, ready };
}

/** Same connection settings (the peeked connection may differ from the resolved one). */
export function sameConnection(a: Connection, b: Connection): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
