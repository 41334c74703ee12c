/**
 * Pool task `query.run`: the single task of a query job on a
 * worker thread, against a PostgreSQL connection. Log lines go to the host
 * on the execution's log channel, where the daemon appends them to the task
 * record while it runs. Cancellation stops the statement in the database.
 */
import type { Connection } from '../../engine/connections/connection.js';
import { runQueryStatements, type QueryTaskResult } from '../../engine/jobs/query-task.js';
import type { TaskHandler } from './task-handler.js';
import { forwardingLogger, type LogRoute } from './forwarding-logger.js';
import { withCancellableSession } from './worker-targets.js';

export interface QueryRunTask {
  readonly type: 'query.run';
  readonly connection: Connection;
  readonly statements: readonly string[];
  readonly log: LogRoute;
}

export const queryRun: TaskHandler<QueryRunTask, QueryTaskResult> = async (task, { signal }) => {
  const logger = forwardingLogger(task.log, 'info');
  return withCancellableSession(task.connection, signal, (session) => runQueryStatements(session, task.statements, (line) => logger.log('info', line)));
};
