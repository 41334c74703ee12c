/**
 * The tasks of a monitor execution: the connection's
 * catalog and the job's baseline decide the objects (engine/monitor/plan.ts),
 * one task per object, run one at a time. Each task opens its own session
 * and measures its object with a single aggregate statement.
 *
 * Monitor statements run on this thread rather than the worker pool: they
 * are aggregates computed inside the database whose results are one row, so
 * there is no row processing to move off the event loop. PostgreSQL sessions
 * are cancelled with `pg_cancel_backend` through the target; DuckDB work goes
 * through the file's actor (one owner per file), which interrupts it.
 */
import type { Connection, ConnectionRegistry, DuckDbConnection, PostgresConnection } from '../../engine/connections/index.js';
import { EngineError } from '../../engine/errors.js';
import type { MonitorFile } from '../../engine/jobs/index.js';
import {
  catalogSchemas, droppedObject, listTables, loadBaseline, measureObject, planMonitor, type MonitorObjectPlan, type MonitorOutcome,
} from '../../engine/monitor/index.js';
import type { ExecutionRecord, JobRecord, StateStore } from '../../engine/state/store.js';
import { withConnectionSession } from '../connection-session.js';
import { substituteVars } from './query-work.js';
import type { TaskResult, TaskWork } from './task-runner.js';

/** What monitor tasks need from the execution (a subset of the job-kind context). */
export interface MonitorContext {
  readonly exec: ExecutionRecord;
  readonly job: JobRecord | undefined;
  readonly store: StateStore;
  readonly connections: ConnectionRegistry;
  /** Lookup: run vars, job vars, then the env layers. */
  readonly lookup: (name: string) => string | undefined;
}

export interface MonitorWorkOptions {
  /** The clock freshness ages are measured against. */
  readonly now?: () => Date;
}

type DatabaseConnection = PostgresConnection | DuckDbConnection;

function databaseConnection(file: MonitorFile, ctx: MonitorContext): DatabaseConnection {
  const conn: Connection | undefined = ctx.connections.get(file.connection);
  if (!conn) throw new EngineError('node', `connection ${file.connection} not found`);
  if (conn.type !== 'postgres' && conn.type !== 'duckdb') throw new EngineError('node', `monitor connection ${file.connection} must be a database connection`);
  return conn;
}

/**
 * Lookup for a monitor file: run vars, the job's config.vars, the
 * file's own `env:`, then the env layers (which `ctx.lookup` ends with).
 */
function monitorLookup(file: MonitorFile, ctx: MonitorContext): (name: string) => string | undefined {
  const runVars = (ctx.exec.overrides?.vars ?? {}) as Record<string, unknown>;
  const jobVars = (ctx.job?.config.vars ?? {}) as Record<string, unknown>;
  return (name) => {
    for (const vars of [runVars, jobVars, file.env as Record<string, unknown>]) {
      if (Object.prototype.hasOwnProperty.call(vars, name)) return String(vars[name]);
    }
    return ctx.lookup(name);
  };
}

const toResult = (o: MonitorOutcome): TaskResult => ({ rows: o.rows, bytes: 0, metrics: { ...o.metrics }, ...(o.warning !== undefined ? { warning: o.warning } : {}) });

export async function monitorTaskWorks(file: MonitorFile, ctx: MonitorContext, options: MonitorWorkOptions = {}): Promise<TaskWork[]> {
  const conn = databaseConnection(file, ctx);
  const lookup = monitorLookup(file, ctx);
  const now = options.now ?? (() => new Date());
  const catalog = await withConnectionSession(conn, undefined, (s) => listTables(s, catalogSchemas(file)));
  const baseline = await loadBaseline(ctx.store, ctx.exec.project_id, ctx.exec.job_id);
  const plan: MonitorObjectPlan[] = planMonitor(file, catalog, baseline);
  return plan.map((obj, i) => ({
    taskId: `task_${i + 1}`,
    streamName: obj.table,
    object: obj.table,
    mode: 'monitor',
    async run(signal, log) {
      const redacted = (line: string) => log(ctx.connections.redact(line));
      if (obj.kind === 'dropped') return toResult(droppedObject(obj, redacted));
      const measured = await withConnectionSession(conn, signal, (session) =>
        measureObject(session, obj, { targetType: conn.type, baseline, now, log: redacted, substitute: (text) => substituteVars(text, lookup) }),
      );
      return toResult(measured);
    },
  }));
}
