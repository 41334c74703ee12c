/**
 * Pool tasks of a build run: `build.setup` checks the connection and creates
 * the run's schemas; `build.node` executes one node. Both run on a worker
 * thread against the worker's cached Target for the connection
 * (worker-targets.ts): PostgreSQL on the build pool, a DuckDB file on that
 * file's own thread (actors/duckdb-actor.ts). The node arrives as compiled
 * SQL (engine/build-plan/node-task.ts `wireTask`); its outcome names the thread it
 * ran on. Cancellation asks the database to stop (`pg_cancel_backend`,
 * DuckDB's interrupt); the thread is never killed. Log lines (warnings, `-d`
 * SQL and chunk lines, the resume hint) go back to the host on the run's log
 * channel (forwarding-logger.ts).
 */
import { threadId } from 'node:worker_threads';
import type { Connection } from '../../engine/connections/connection.js';
import { executeNode } from '../../engine/build-plan/execute-node.js';
import type { NodeOutcome, RunSettings, WireTask } from '../../engine/build-plan/node-task.js';
import { streamLogger, type Level } from '../../engine/log.js';
import type { CatalogEntry, SchemaRef } from '../../engine/targets/target.js';
import { importNear } from '../../engine/lazy-import.js';
import type { TemplateEngine } from '../../engine/template/template-engine.js';
import type { TaskHandler } from './task-handler.js';
import { forwardingLogger, type LogRoute } from './forwarding-logger.js';
import { withCancellableSession } from './worker-targets.js';

export interface BuildNodeTask {
  readonly type: 'build.node';
  readonly node: WireTask;
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly logLevel: Level;
  readonly jsonLogs?: boolean;
  /** Forward log lines to the host; without it they go to this process's stderr. */
  readonly log?: LogRoute;
}

export interface BuildSetupTask {
  readonly type: 'build.setup';
  readonly connection: Connection;
  /** Created with `CREATE SCHEMA IF NOT EXISTS`; none still checks the connection. */
  readonly schemas: readonly SchemaRef[];
  /** Also read the tables and views of `schemas` (the run's one catalog read). */
  readonly catalog?: boolean;
}

export interface BuildSetupResult {
  readonly thread: number;
  /** With `catalog`: every table and view of the schemas. */
  readonly catalog: readonly CatalogEntry[];
}

let templates: Promise<TemplateEngine> | undefined;
/** This thread's template engine, loaded by its first incremental model. */
const engine = () => (templates ??= importNear<typeof import('../../engine/template/nunjucks-engine.js')>(import.meta.url, '../../engine/template/nunjucks-engine.js').then((m) => m.createNunjucksEngine()));
const never = new AbortController().signal;

export const buildNode: TaskHandler<BuildNodeTask, NodeOutcome> = async (task, { signal }) => {
  const logger = task.log ? forwardingLogger(task.log, task.logLevel) : streamLogger({ level: task.logLevel, json: task.jsonLogs });
  const outcome = await withCancellableSession(task.connection, signal, (session) => executeNode(task.node, { session, settings: task.settings, logger, engine }));
  return { ...outcome, thread: threadId };
};

/**
 * Connects (`could not connect to '<t>'` on failure), creates the schemas and
 * reads their catalog; the session stays in this worker's pool for the nodes.
 */
export const buildSetup: TaskHandler<BuildSetupTask, BuildSetupResult> = async (task) => {
  const catalog = await withCancellableSession(task.connection, never, async (session) => {
    if (task.schemas.length > 0) await session.createSchemas(task.schemas);
    return task.catalog && task.schemas.length > 0 ? session.catalog(task.schemas) : [];
  });
  return { thread: threadId, catalog };
};
