/**
 * Pool task `build.node`: executes one build node on a worker thread against
 * a PostgreSQL target. Each worker keeps one `Target` (its connection pool)
 * per connection, so consecutive tasks reuse connections. Cancellation asks
 * the database to stop (`Target.cancel` → `pg_cancel_backend`); the thread
 * is never killed.
 */
import type { Connection } from '../../engine/connections/connection.js';
import { executeNode } from '../../engine/build/execute-node.js';
import type { NodeOutcome, NodeTask, RunSettings } from '../../engine/build/node-task.js';
import { EngineError } from '../../engine/errors.js';
import { streamLogger, type Level } from '../../engine/log.js';
import { openTarget, type Target } from '../../engine/targets/index.js';
import { createNunjucksEngine } from '../../engine/template/nunjucks-engine.js';
import type { TaskHandler } from './task-handler.js';

export interface BuildNodeTask {
  readonly type: 'build.node';
  readonly node: NodeTask;
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly logLevel: Level;
  readonly jsonLogs?: boolean;
}

const targets = new Map<string, Target>();
const engine = createNunjucksEngine();

function targetFor(connection: Connection): Target {
  const key = JSON.stringify(connection);
  let t = targets.get(key);
  if (!t) {
    t = openTarget(connection, { poolSize: 1 });
    targets.set(key, t);
  }
  return t;
}

export const buildNode: TaskHandler<BuildNodeTask, NodeOutcome> = async (task, { signal }) => {
  if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
  const target = targetFor(task.connection);
  const session = await target.open();
  const onAbort = () => void target.cancel(session.cancelKey).catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const logger = streamLogger({ level: task.logLevel, json: task.jsonLogs });
    return await executeNode(task.node, { session, settings: task.settings, logger, engine });
  } catch (err) {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled', err);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await session.close().catch(() => {});
  }
};
