/**
 * Each worker thread keeps one `Target` (its PostgreSQL connection pool) per
 * connection, so consecutive tasks on that thread reuse connections instead
 * of paying a connect per task. The pool holds as many connections as the
 * thread runs tasks at once.
 */
import { workerData } from 'piscina';
import type { PoolWorkerData } from '../pool-protocol.js';
import type { Connection } from '../../engine/connections/connection.js';
import { withCancellableSession as withTargetSession } from '../../engine/targets/cancellable-session.js';
import { openTarget, type Target, type TargetSession } from '../../engine/targets/index.js';

const targets = new Map<string, Target>();
const poolSize = (workerData as PoolWorkerData | undefined)?.concurrentTasks ?? 1;

export function targetFor(connection: Connection): Target {
  // One pool per database, whichever execution asks: the session tag is set per session.
  const untagged = connection.type === 'postgres' && connection.sessionTag !== undefined ? { ...connection, sessionTag: undefined } : connection;
  const key = JSON.stringify(untagged);
  let t = targets.get(key);
  if (!t) {
    t = openTarget(untagged, { poolSize });
    targets.set(key, t);
  }
  return t;
}

/** Runs `work` on a fresh session of the connection's cached target (engine/targets/cancellable-session.ts). */
export function withCancellableSession<T>(connection: Connection, signal: AbortSignal, work: (session: TargetSession) => Promise<T>): Promise<T> {
  return withTargetSession(targetFor(connection), signal, work, connection.type === 'postgres' ? connection.sessionTag : undefined);
}
