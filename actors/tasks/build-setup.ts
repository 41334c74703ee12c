/**
 * Pool task `build.setup`: connects to a PostgreSQL target and creates the
 * run's schemas (§7.2) before the first node, on a worker thread, so a
 * connection problem fails the run at once (`could not connect to '<t>'`)
 * and the connection stays open in the worker's pool for the first node.
 */
import type { Connection } from '../../engine/connections/connection.js';
import type { SchemaRef } from '../../engine/targets/target.js';
import type { TaskHandler } from './task-handler.js';
import { withCancellableSession } from './worker-targets.js';

export interface BuildSetupTask {
  readonly type: 'build.setup';
  readonly connection: Connection;
  readonly schemas: readonly SchemaRef[];
}

export const buildSetup: TaskHandler<BuildSetupTask, null> = async (task, { signal }) =>
  withCancellableSession(task.connection, signal, async (session) => {
    if (task.schemas.length > 0) await session.createSchemas(task.schemas);
    return null;
  });
