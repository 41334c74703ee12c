/**
 * A cancellable session on a database connection for host code written
 * against a session (query steps and jobs, monitor measurements). PostgreSQL:
 * the connection's own target on this thread, opened for the work and closed
 * after it. A DuckDB file: the work is a job of the file's actor and every
 * statement runs on the file's thread (duckdb-actor.ts), so the file is
 * never opened here.
 */
import type { Connection } from '../engine/connections/index.js';
import { withCancellableSession } from '../engine/targets/cancellable-session.js';
import { openTarget, type TargetSession } from '../engine/targets/index.js';
import { duckdbActor } from './duckdb-actor.js';

export async function withConnectionSession<T>(conn: Connection, signal: AbortSignal | undefined, work: (session: TargetSession) => Promise<T>): Promise<T> {
  if (conn.type === 'duckdb') return duckdbActor(conn.path).run((thread) => thread.withSession(conn, work), signal ? { signal } : {});
  const target = openTarget(conn, { poolSize: 1 });
  try {
    return await withCancellableSession(target, signal, work);
  } finally {
    await target.close().catch(() => {});
  }
}
