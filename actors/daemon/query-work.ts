/**
 * The one task of a query job execution: `${NAME}`
 * substitution at run time, then the statements on the declared
 * connection — PostgreSQL on a pool worker thread, DuckDB through the
 * file's actor. Log lines become the task's live output.
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import { EngineError } from '../../engine/errors.js';
import { runQueryStatements } from '../../engine/jobs/query-task.js';
import type { ExecutionRecord } from '../../engine/state/store.js';
import { withConnectionSession } from '../connection-session.js';
import type { TaskPool } from '../pool.js';
import type { LineRouter } from './line-router.js';
import type { TaskWork } from './task-runner.js';

export interface QueryJobFile {
  readonly connection: string;
  readonly statements: readonly string[];
}

export interface QueryWorkDeps {
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly connections: (projectId: string) => ConnectionRegistry;
}

const TOKEN = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Substitution; an unresolved name fails the task with `variable NAME is not set`. */
export function substituteVars(text: string, lookup: (name: string) => string | undefined): string {
  return text.replace(TOKEN, (_, name: string) => {
    const v = lookup(name);
    if (v === undefined) throw new EngineError('node', `variable ${name} is not set`);
    return v;
  });
}

export function queryTaskWork(file: QueryJobFile, exec: ExecutionRecord, deps: QueryWorkDeps, lookup: (name: string) => string | undefined): TaskWork {
  return {
    taskId: 'task_1',
    streamName: exec.file_name,
    object: file.connection,
    mode: 'query',
    async run(signal, log) {
      const registry = deps.connections(exec.project_id);
      const conn = registry.get(file.connection);
      if (!conn) throw new EngineError('node', `connection ${file.connection} not found`);
      const statements = file.statements.map((s) => substituteVars(s, lookup));
      if (conn.type === 'postgres') {
        const route = deps.lines.open((line) => log(registry.redact(line)));
        try {
          const r = await deps.pool.run({ type: 'query.run', connection: conn, statements, log: route.route }, { signal });
          return { rows: r.rows, bytes: 0 };
        } finally {
          await route.close();
        }
      }
      if (conn.type === 'duckdb') {
        const r = await withConnectionSession(conn, signal, (session) => runQueryStatements(session, statements, log));
        return { rows: r.rows, bytes: 0 };
      }
      throw new EngineError('node', `query connection ${file.connection} must be a database connection`);
    },
  };
}
