/**
 * Pool task `replication.stream`: one replication stream on a worker thread.
 * The directions that touch no DuckDB database file (PostgreSQL and file
 * connections; file readers and writers run in a task-local in-memory
 * DuckDB) run on the shared pool. A stream with a DuckDB file on either side
 * is a job of that file's actor and runs on the file's own thread
 * (actors/duckdb-actor.ts), which says so with `duckdbFile`: only there may
 * the stream open the file. Log lines go to the host on the execution's log
 * channel; cancellation stops the statement in the database and the task
 * fails with `cancelled`.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { EngineError } from '../../engine/errors.js';
import { closeDuckdbInstance, duckdbInstance, instanceKey } from '../../engine/targets/duckdb/instance-cache.js';
import { needsDuckdbActor, runStream, type StreamOutcome, type StreamPlan } from '../../engine/replication/index.js';
import type { TaskHandler } from './task-handler.js';
import { forwardingLogger, type LogRoute } from './forwarding-logger.js';

export interface ReplicationStreamTask {
  readonly type: 'replication.stream';
  readonly plan: StreamPlan;
  readonly log: LogRoute;
  /** The DuckDB file whose thread this is (set by the file's actor). */
  readonly duckdbFile?: string;
}

/**
 * A job on a connection of this thread's instance of `path`; the actor
 * already serialises jobs. The other file of a DuckDB → DuckDB stream is
 * opened here only while its own actor is held for this stream (the host
 * takes both actors, see actors/daemon/replication-work.ts), and closed
 * again right after.
 */
function onThisThread(own: string) {
  return async <T>(path: string, job: (conn: DuckDBConnection) => Promise<T>): Promise<T> => {
    const connection = await (await duckdbInstance(path)).connect();
    try {
      return await job(connection);
    } finally {
      connection.closeSync();
      if (instanceKey(path) !== instanceKey(own)) await closeDuckdbInstance(path);
    }
  };
}

export const replicationStream: TaskHandler<ReplicationStreamTask, StreamOutcome> = async (task, { signal }) => {
  const file = task.duckdbFile;
  if (needsDuckdbActor(task.plan) && file === undefined) throw new EngineError('internal', `stream ${task.plan.streamName} touches a DuckDB file and must run through its actor`);
  const logger = forwardingLogger(task.log, 'info');
  return runStream(task.plan, { signal, log: (line) => logger.log('info', line), ...(file !== undefined ? { duckdb: onThisThread(file) } : {}) });
};
