/**
 * Each worker thread keeps one `Target` (its PostgreSQL connection pool) per
 * connection, so consecutive tasks on that thread reuse connections instead
 * of paying a connect per task.
 */
import type { Connection } from '../../engine/connections/connection.js';
import { openTarget, type Target } from '../../engine/targets/index.js';

const targets = new Map<string, Target>();

export function targetFor(connection: Connection): Target {
  const key = JSON.stringify(connection);
  let t = targets.get(key);
  if (!t) {
    t = openTarget(connection, { poolSize: 1 });
    targets.set(key, t);
  }
  return t;
}
