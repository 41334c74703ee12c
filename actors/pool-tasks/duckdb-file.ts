/**
 * Tasks of a DuckDB file's own thread (actors/duckdb-actor.ts): that thread
 * is the only place in the process where the file's `DuckDBInstance` lives,
 * and its actor sends it one job's tasks at a time.
 *
 * - `duckdb.open` opens the instance (the actor's first task; its failure is
 *   the actor's `could not open duckdb database <path>`), and reports the
 *   thread and how many times this thread opened the file;
 * - `duckdb.session` is one call of a session on the file: the host holds a
 *   proxy whose methods are these calls (`TargetSession` methods take and
 *   return plain data), so host code written against a session — query
 *   steps, monitor measurements — runs its statements here;
 * - `duckdb.tables` lists a schema's tables for replication wildcards;
 * - `duckdb.sql` runs plain SQL (tools and tests that read a file through
 *   its owner instead of opening it a second time);
 * - `duckdb.close` closes the instance before the thread stops.
 * Build nodes (`build.node`) and replication streams (`replication.stream`)
 * run on this thread through their own handlers.
 */
import { threadId } from 'node:worker_threads';
import type { DuckDbConnection } from '../../engine/connections/connection.js';
import { EngineError } from '../../engine/errors.js';
import { importNear } from '../../engine/lazy-import.js';
import { closeDuckdbInstance, duckdbInstance, duckdbOpenCount } from '../../engine/targets/duckdb/instance-cache.js';
import type { TargetSession } from '../../engine/targets/target.js';
import type { TaskHandler } from './task-handler.js';
import { targetFor } from './worker-targets.js';

export interface DuckDbOpenTask {
  readonly type: 'duckdb.open';
  readonly path: string;
}

export interface DuckDbFileInfo {
  /** The file's thread. */
  readonly threadId: number;
  /** Instances of the file this thread created so far (one while it stays open). */
  readonly opens: number;
}

export const duckdbOpen: TaskHandler<DuckDbOpenTask, DuckDbFileInfo> = async (task) => {
  try {
    await duckdbInstance(task.path);
  } catch (err) {
    throw new EngineError('connection', `could not open duckdb database ${task.path}`, err);
  }
  return { threadId, opens: duckdbOpenCount(task.path) };
};

export interface DuckDbCloseTask {
  readonly type: 'duckdb.close';
  readonly path: string;
}

export const duckdbClose: TaskHandler<DuckDbCloseTask, null> = async (task) => {
  for (const [sid, session] of sessions) {
    sessions.delete(sid);
    await (await session.catch(() => undefined))?.close().catch(() => {});
  }
  await closeDuckdbInstance(task.path);
  return null;
};

/** Session methods a proxy may call: everything but `cancel` (the task's signal) and `close` (`op: 'close'`). */
export type SessionMethod = Exclude<{ [K in keyof TargetSession]: TargetSession[K] extends (...args: never[]) => unknown ? K : never }[keyof TargetSession], 'cancel' | 'close'>;

export interface DuckDbSessionTask {
  readonly type: 'duckdb.session';
  readonly connection: DuckDbConnection;
  /** The proxy's id: its first call opens the session, `close` ends it. */
  readonly sid: string;
  readonly op: 'call' | 'close';
  readonly method?: SessionMethod;
  readonly args?: readonly unknown[];
}

const sessions = new Map<string, Promise<TargetSession>>();

export const duckdbSession: TaskHandler<DuckDbSessionTask, unknown> = async (task, { signal }) => {
  if (task.op === 'close') {
    const session = sessions.get(task.sid);
    sessions.delete(task.sid);
    await (await session?.catch(() => undefined))?.close();
    return null;
  }
  let opening = sessions.get(task.sid);
  if (!opening) {
    opening = targetFor(task.connection).open();
    sessions.set(task.sid, opening);
    opening.catch(() => sessions.delete(task.sid));
  }
  const session = await opening;
  if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
  const onAbort = () => void session.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const method = session[task.method!] as (...args: unknown[]) => Promise<unknown>;
    return await method.apply(session, [...(task.args ?? [])]);
  } catch (err) {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled', err);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
};

export interface DuckDbTablesTask {
  readonly type: 'duckdb.tables';
  readonly path: string;
  readonly schema: string;
}

export const duckdbTables: TaskHandler<DuckDbTablesTask, string[]> = async (task, { signal }) => {
  const [{ duckTables }, { DuckSession }] = await Promise.all([
    importNear<typeof import('../../engine/replication/catalog.js')>(import.meta.url, '../../engine/replication/catalog.js'),
    importNear<typeof import('../../engine/replication/duck-session.js')>(import.meta.url, '../../engine/replication/duck-session.js'),
  ]);
  const connection = await (await duckdbInstance(task.path)).connect();
  try {
    return await duckTables(new DuckSession(connection, signal), task.schema);
  } finally {
    connection.closeSync();
  }
};

/** How `duckdb.sql` returns the rows of the statement's result (the node-api reader's forms). */
export type RowShape = 'none' | 'rows' | 'rows-js' | 'objects' | 'objects-js' | 'objects-json';

export interface DuckDbSqlTask {
  readonly type: 'duckdb.sql';
  readonly path: string;
  /** One statement whose rows come back, or (shape `none`) any number of statements. */
  readonly sql: string;
  readonly shape: RowShape;
}

/** Plain SQL on the file, for tools and tests that read or prepare a file through its owner. */
export const duckdbSql: TaskHandler<DuckDbSqlTask, unknown> = async (task) => {
  const connection = await (await duckdbInstance(task.path)).connect();
  try {
    if (task.shape === 'none') {
      await connection.run(task.sql);
      return null;
    }
    const reader = await connection.runAndReadAll(task.sql);
    switch (task.shape) {
      case 'rows':
        return reader.getRows();
      case 'rows-js':
        return reader.getRowsJS();
      case 'objects':
        return reader.getRowObjects();
      case 'objects-js':
        return reader.getRowObjectsJS();
      case 'objects-json':
        return reader.getRowObjectsJson();
    }
  } finally {
    connection.closeSync();
  }
};
