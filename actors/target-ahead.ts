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
   * Settles once `sessions` connections are open and idle in the target's
   * pool; rejects with the connect error (`could not connect to '<t>'`),
   * which the run reports instead of connecting again.
   */
  readonly ready: Promise<void>;
}

export function openTargetAhead(connection: Connection, sessions: number): TargetAhead {
  const target = openTarget(connection, { poolSize: sessions });
  const ready = Promise.all(
    Array.from({ length: sessions }, async () => {
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
