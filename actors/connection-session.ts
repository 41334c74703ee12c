/**
 * A cancellable session on a database connection, on the host thread: the
 * connection's own target, opened for the work and closed after it, and for
 * a DuckDB file the work goes through the file's actor (one writer).
 */
import type { Connection } from '../engine/connections/index.js';
import { withCancellableSession } from '../engine/targets/cancellable-session.js';
import { openTarget, type TargetSession } from '../engine/targets/index.js';
import { duckdbActor } from './duckdb-actor.js';

export async function withConnectionSession<T>(conn: Connection, signal: AbortSignal | undefined, work: (session: TargetSession) => Promise<T>): Promise<T> {
  const run = async (): Promise<T> => {
    const target = openTarget(conn, { poolSize: 1 });
    try {
      return await withCancellableSession(target, signal, work);
    } finally {
      await target.close().catch(() => {});
    }
  };
  return conn.type === 'duckdb' ? duckdbActor(conn.path).run(run, signal ? { signal } : {}) : run();
}
