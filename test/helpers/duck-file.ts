/**
 * Reads and writes a DuckDB file from a test through the file's actor — the
 * process's one owner of the file, on its own thread — never by opening a
 * second instance on the test's thread (which would not see what the
 * actor's instance wrote, and would lose what it wrote itself).
 */
import { duckdbActor } from '../../actors/duckdb-actor.js';
import type { RowShape } from '../../actors/pool-tasks/duckdb-file.js';

export function duckSql<T = unknown>(path: string, sql: string, shape: RowShape = 'rows-js'): Promise<T> {
  return duckdbActor(path).run((thread) => thread.run({ type: 'duckdb.sql', path: thread.path, sql, shape })) as Promise<T>;
}

/** Runs statements (any number) for their effect. */
export const duckExec = (path: string, sql: string): Promise<void> => duckSql<void>(path, sql, 'none');
