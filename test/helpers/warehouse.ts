/**
 * The two real warehouses the `run` integration tests build into, behind one
 * shape: make a project that targets it, read rows back after the CLI run.
 *
 * DuckDB: one `wh.duckdb` per project directory, read through the process's
 * instance cache (opening the same file twice in one process loses data).
 * PostgreSQL: one fresh database per test file (`PG=<url>` in the process
 * environment), every value read back as the server's text rendering so the
 * two targets compare alike.
 */
import pg from 'pg';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { duckSql } from './duck-file.js';
import { DUCK_ENV, project } from './build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './pg.js';

export type Row = Record<string, string | null>;

export interface Warehouse {
  readonly kind: 'duckdb' | 'postgres';
  /** The target connection name (`DUCK` / `PG`). */
  readonly target: string;
  /**
   * Extra `run` flags: on PostgreSQL `--threads 2`, because every run starts a
   * fresh worker pool and each worker transpiles the engine under tsx
   * (~0.4 s per worker on this 2-CPU box; 4 workers made a run 1.1–1.5 s).
   */
  readonly args: readonly string[];
  /** False (test skipped) when PostgreSQL is down locally; throws under CI. */
  ready(t: TestContext): Promise<boolean>;
  /** A project dir with `service_build.yml` = `target: <T>\n<config>` and `files`. */
  project(files: Readonly<Record<string, string>>, config?: string): string;
  /** Rows of `sql` in the project's warehouse; every value as text (or null). */
  query(dir: string, sql: string): Promise<Row[]>;
  close(): Promise<void>;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function duckWarehouse(): Warehouse {
  return {
    kind: 'duckdb',
    target: 'DUCK',
    args: [],
    ready: async () => true,
    project: (files, config = '') => project({ 'service_build.yml': `target: DUCK\n${config}`, 'env.yaml': DUCK_ENV, ...files }),
    async query(dir, sql) {
      // Through the file's actor: the build that wrote the file may have run in this process.
      const rows = await duckSql<Record<string, unknown>[]>(join(dir, 'wh.duckdb'), sql, 'objects-json');
      return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)])));
    },
    close: async () => {},
  };
}

/** PostgreSQL warehouse: call `setup()` from `before()`; it sets `process.env.PG`. */
export function pgWarehouse(prefix: string): Warehouse & { setup(): Promise<void>; readonly url: string } {
  let db: TempDatabase | undefined;
  let client: pg.Client | undefined;
  return {
    kind: 'postgres',
    target: 'PG',
    args: ['--threads', '2'],
    get url() {
      if (!db) throw new Error('pgWarehouse: setup() did not create a database');
      return db.url;
    },
    async setup() {
      if (!(await pgAvailable())) return;
      db = await createTempDatabase(prefix);
      process.env.PG = db.url;
      // Every value as the server's text: `types` returning the raw string for every OID.
      client = new pg.Client({ connectionString: db.url, types: { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig });
      await client.connect();
    },
    ready: (t) => requirePg(t),
    project: (files, config = '') => project({ 'service_build.yml': `target: PG\n${config}`, ...files }),
    async query(_dir, sql) {
      if (!client) throw new Error('pgWarehouse: not set up');
      const res = await client.query(sql);
      return res.rows.map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)])));
    },
    async close() {
      await client?.end().catch(() => {});
      await db?.drop();
    },
  };
}

/** Names of leftover `_service_tmp_%` tables (information_schema; both targets). */
export async function tempTables(wh: Warehouse, dir: string): Promise<string[]> {
  const rows = await wh.query(dir, `select table_schema || '.' || table_name as t from information_schema.tables where table_name like '\\_service\\_tmp\\_%' escape '\\' order by 1`);
  return rows.map((r) => r.t!);
}
