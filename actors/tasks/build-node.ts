/**
 * Pool task `build.node`: executes one build node on a worker thread against
 * a PostgreSQL target (the worker's cached Target, see worker-targets.ts).
 * Cancellation asks the database to stop (`Target.cancel` →
 * `pg_cancel_backend`); the thread is never killed. Log lines (warnings,
 * `-d` SQL and chunk lines, the chunk resume hint) go back to the host on
 * the run's log channel (task-log.ts).
 */
import type { Connection } from '../../engine/connections/connection.js';
import { executeNode } from '../../engine/build/execute-node.js';
import type { NodeOutcome, NodeTask, RunSettings } from '../../engine/build/node-task.js';
import { streamLogger, type Level } from '../../engine/log.js';
import { createNunjucksEngine } from '../../engine/template/nunjucks-engine.js';
import type { TaskHandler } from './task-handler.js';
import { forwardingLogger, type LogRoute } from './task-log.js';
import { withCancellableSession } from './worker-targets.js';

export interface BuildNodeTask {
  readonly type: 'build.node';
  readonly node: NodeTask;
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly logLevel: Level;
  readonly jsonLogs?: boolean;
  /** Forward log lines to the host; without it they go to this process's stderr. */
  readonly log?: LogRoute;
}

const engine = createNunjucksEngine();

export const buildNode: TaskHandler<BuildNodeTask, NodeOutcome> = async (task, { signal }) => {
  const logger = task.log ? forwardingLogger(task.log, task.logLevel) : streamLogger({ level: task.logLevel, json: task.jsonLogs });
  return withCancellableSession(task.connection, signal, (session) => executeNode(task.node, { session, settings: task.settings, logger, engine }));
};
