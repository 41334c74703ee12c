/**
 * DuckDB as a replication target. PostgreSQL sources arrive as binary
 * `COPY … TO STDOUT`, decoded into column blocks that a table function
 * hands to `INSERT … SELECT` in batches of at most `batch_limit` rows
 * (duckdb-copy-feed.ts). SQL feeds
 * (same-file DuckDB sources, files read by this DuckDB) become one
 * `INSERT … SELECT`. Both insert by column name, so existing tables with
 * other columns need no staging.
 */
import { EngineError } from '../errors.js';
import { quoteIdent, quoteRelation, tempRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import type { DuckSession } from './duck-session.js';
import { loadCopyFeed } from './duckdb-copy-feed.js';
import type { Feed, LoadCount } from './feed.js';
import { binaryColumn } from './pg-binary-columns.js';
import { progressLog } from './progress.js';
import { DEFAULT_BATCH_LIMIT } from './row-batches.js';
import type { LoadColumn, TableTarget, TargetTable } from './table-load.js';

/** Loads a PostgreSQL binary COPY feed into `rel` (`columns` in feed order). */
async function loadPgBinary(s: DuckSession, rel: Relation, columns: readonly LoadColumn[], feed: Extract<Feed, { kind: 'pg-binary' }>, log: (line: string) => void, batchLimit: number): Promise<LoadCount> {
  const binary = feed.columns.map((c, i) => binaryColumn(c, columns[i]!.ddl));
  const list = columns.map((c) => quoteIdent(c.name)).join(', ');
  const progress = progressLog(log);
  const stream = feed.open();
  try {
    const r = await s.singleThreaded(() => loadCopyFeed(s, stream, {
      columns: binary,
      names: columns.map((c) => c.name),
      insert: (from) => `INSERT INTO ${quoteRelation(rel)} (${list}) SELECT * FROM ${from}`,
      onProgress: progress,
      batchLimit,
    }));
    if (r.statements > 1) log(`loaded ${r.rows} rows in ${r.statements} INSERT statements of at most ${batchLimit} rows (batch_limit)`);
    return { rows: r.rows, bytes: r.bytes };
  } catch (err) {
    stream.destroy();
    throw s.translate(err);
  }
}

const DESCRIBE_SQL = (rel: Relation) => `SELECT t.table_type, c.column_name, c.data_type
  FROM information_schema.tables t
  LEFT JOIN information_schema.columns c
    ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema AND c.table_name = t.table_name
  WHERE t.table_catalog = current_database() AND t.table_schema = '${rel.schema.replace(/'/g, "''")}' AND t.table_name = '${rel.name.replace(/'/g, "''")}'
  ORDER BY c.ordinal_position`;

export function duckTableTarget(s: DuckSession, log: (line: string) => void): TableTarget {
  const target: TableTarget = {
    dialect: 'duckdb',
    async exec(sql) {
      await s.run(sql);
    },
    cleanup: (sql) => s.cleanup(sql),
    async describe(rel): Promise<TargetTable | null> {
      const rows = await s.rows(DESCRIBE_SQL(rel));
      if (rows.length === 0) return null;
      const kind = String(rows[0]![0]) === 'VIEW' ? 'view' : 'table';
      return { kind, columns: rows.filter((r) => r[1] !== null).map((r) => ({ name: String(r[1]), type: String(r[2]) })) };
    },
    async maxText(rel, column) {
      const rows = await s.rows(`SELECT CAST(max(${quoteIdent(column)}) AS VARCHAR) FROM ${quoteRelation(rel)}`);
      const v = rows[0]?.[0];
      return v === null || v === undefined ? null : String(v);
    },
    staging: (rel, runId) => ({ rel: tempRelation(rel, `${runId}s`), create: 'CREATE TABLE' }),
    truncateSql: (rel) => `DELETE FROM ${quoteRelation(rel)}`,
    async load(rel: Relation, columns: readonly LoadColumn[], feed: Feed, batchLimit: number | undefined): Promise<LoadCount> {
      if (feed.kind === 'duckdb-sql') {
        // Rows this DuckDB reads itself never cross a connection: there is nothing to cut into batches.
        if (batchLimit !== undefined) log(`batch_limit ${batchLimit} does not apply: the rows move inside DuckDB in one INSERT … SELECT`);
        const list = columns.map((c) => quoteIdent(c.name)).join(', ');
        const rows = await s.run(`INSERT INTO ${quoteRelation(rel)} (${list}) SELECT * FROM (\n${feed.sql}\n) AS _s`);
        return { rows, bytes: 0 };
      }
      if (feed.kind === 'pg-binary') return loadPgBinary(s, rel, columns, feed, log, batchLimit ?? DEFAULT_BATCH_LIMIT);
      throw new EngineError('internal', 'a DuckDB target takes PostgreSQL binary COPY or DuckDB SQL');
    },
  };
  return target;
}
