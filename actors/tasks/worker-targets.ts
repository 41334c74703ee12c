/**
 * Each worker thread keeps one `Target` (its PostgreSQL connection pool) per
 * connection, so consecutive tasks on that thread reuse connections instead
 * of paying a connect per task. The pool holds as many connections as the
 * thread runs tasks at once.
 */
import { workerData } from 'piscina';
import type { PoolWorkerData } from '../pool-protocol.js';
import type { Connection } from '../../engine/connections/connection.js';
import { EngineError } from '../../engine/errors.js';
import { openTarget, type Target, type TargetSession } from '../../engine/targets/index.js';

const targets = new Map<string, Target>();
const poolSize = (workerData as PoolWorkerData | undefined)?.concurrentTasks ?? 1;

export function targetFor(connection: Connection): Target {
  const key = JSON.stringify(connection);
  let t = targets.get(key);
  if (!t) {
    t = openTarget(connection, { poolSize });
    targets.set(key, t);
  }
  return t;
}

/**
 * Runs `work` on a fresh session of the connection's target; aborting
 * `signal` cancels the statement in flight (`Target.cancel`), and the task
 * then fails with `cancelled`. The session is closed afterwards.
 */
export async function withCancellableSession<T>(connection: Connection, signal: AbortSignal, work: (session: TargetSession) => Promise<T>): Promise<T> {
  if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
  const target = targetFor(connection);
  const session = await target.open();
  const onAbort = () => void target.cancel(session.cancelKey).catch(() => {});
  // An abort that landed while connecting has already fired: the listener below would never run.
  if (signal.aborted) {
    await session.close().catch(() => {});
    throw new EngineError('cancelled', 'cancelled');
  }
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(session);
  } catch (err) {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled', err);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await session.close().catch(() => {});
  }
}
