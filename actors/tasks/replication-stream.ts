/**
 * Pool task `replication.stream`: one replication stream on a worker thread
 * — the directions that touch no DuckDB database file
 * (PostgreSQL and file connections; file readers and writers run in a
 * task-local in-memory DuckDB). Streams with a DuckDB file on either side
 * run on the main thread through the file's actor instead. Log lines go to
 * the host on the execution's log channel; cancellation stops the statement
 * in the database and the task fails with `cancelled`.
 */
import { EngineError } from '../../engine/errors.js';
import { needsDuckdbActor, runStream, type StreamOutcome, type StreamPlan } from '../../engine/replication/index.js';
import type { TaskHandler } from './task-handler.js';
import { forwardingLogger, type LogRoute } from './task-log.js';

export interface ReplicationStreamTask {
  readonly type: 'replication.stream';
  readonly plan: StreamPlan;
  readonly log: LogRoute;
}

export const replicationStream: TaskHandler<ReplicationStreamTask, StreamOutcome> = async (task, { signal }) => {
  if (needsDuckdbActor(task.plan)) throw new EngineError('internal', `stream ${task.plan.streamName} touches a DuckDB file and must run through its actor`);
  const logger = forwardingLogger(task.log, 'info');
  return runStream(task.plan, { signal, log: (line) => logger.log('info', line) });
};
