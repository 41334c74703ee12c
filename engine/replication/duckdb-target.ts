/**
 * DuckDB as a replication target. PostgreSQL sources arrive as CSV from
 * `COPY … TO STDOUT`, cut into row-aligned batch files that DuckDB's own
 * CSV reader loads (`INSERT … SELECT … FROM read_csv(…)`, see
 * csv-batches.ts); bytea travels as hex and intervals as
 * `months|days|microseconds`, rebuilt in the SELECT. SQL feeds (same-file
 * DuckDB sources, files read by this DuckDB) become one `INSERT … SELECT`.
 * Both insert by column name, so existing tables with other columns need no
 * staging.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../errors.js';
import { quoteIdent, quoteRelation, tempRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import type { SourceColumn } from './column-types.js';
import { loadCsvBatches } from './csv-batches.js';
import type { DuckSession } from './duck-session.js';
import { DUCKDB_MAX_LINE_BYTES, oversizedRowError } from './oversized-row.js';
import type { Feed, LoadCount } from './feed.js';
import { progressLog } from './progress.js';
import { sqlString } from './source-query.js';
import type { LoadColumn, TableTarget, TargetTable } from './table-load.js';

/** Batch size of the CSV files DuckDB loads (two at most exist at a time). */
const BATCH_BYTES = 32 << 20;

/*
 * Rows up to 16 MiB (DuckDB's default is 2 MiB). The read buffer stays at
 * DuckDB's default 32 MiB: by default it is 16 × the line limit, which for
 * long lines allocates blocks the task-local 512 MB instance cannot hold.
 */

/** The type `read_csv` parses a column as, and the expression turning it into the target value. */
function csvColumn(col: SourceColumn, ddl: string, name: string): { type: string; expr: string } {
  const c = quoteIdent(name);
  if (col.kind === 'blob') return { type: 'VARCHAR', expr: `unhex(${c})` };
  if (col.kind === 'interval') {
    const part = (i: number, t: string) => `CAST(split_part(${c}, '|', ${i}) AS ${t})`;
    return { type: 'VARCHAR', expr: `to_months(${part(1, 'INTEGER')}) + to_days(${part(2, 'INTEGER')}) + to_microseconds(${part(3, 'BIGINT')})` };
  }
  if (col.kind === 'json' || col.kind === 'nested' || col.kind === 'other') return { type: 'VARCHAR', expr: c };
  return { type: ddl, expr: c };
}

/** Loads PostgreSQL CSV into `rel` (`columns` in feed order) through batch files and `read_csv`. */
async function loadPgCsv(s: DuckSession, rel: Relation, columns: readonly LoadColumn[], feed: Extract<Feed, { kind: 'pg-csv' }>, log: (line: string) => void): Promise<LoadCount> {
  const specs = feed.columns.map((c, i) => csvColumn(c, columns[i]!.ddl, `c${i}`));
  const readColumns = `{${specs.map((x, i) => `${sqlString(`c${i}`)}: ${sqlString(x.type)}`).join(', ')}}`;
  const list = columns.map((c) => quoteIdent(c.name)).join(', ');
  const select = specs.map((x) => x.expr).join(', ');
  const progress = progressLog(log);
  const dir = await mkdtemp(join(tmpdir(), 'service-replication-'));
  const stream = feed.open();
  let rows = 0;
  try {
    const bytes = await loadCsvBatches(stream, {
      dir,
      batchBytes: BATCH_BYTES,
      onBytes: (total) => progress(rows, total),
      load: async (file) => {
        try {
          rows += await s.run(
            `INSERT INTO ${quoteRelation(rel)} (${list}) SELECT ${select} FROM read_csv(${sqlString(file)}, columns = ${readColumns}, header = false, auto_detect = false, ` +
              `delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, max_line_size = ${DUCKDB_MAX_LINE_BYTES}, buffer_size = 33554432)`,
          );
        } catch (err) {
          throw (await oversizedRowError(err, file, rows, columns.map((c) => c.name))) ?? err;
        }
      },
    });
    return { rows, bytes };
  } catch (err) {
    stream.destroy();
    throw s.translate(err);
  } finally {
    await rm(dir, { recursive: true, force: true });
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
    async load(rel: Relation, columns: readonly LoadColumn[], feed: Feed): Promise<LoadCount> {
      if (feed.kind === 'duckdb-sql') {
        const list = columns.map((c) => quoteIdent(c.name)).join(', ');
        const rows = await s.run(`INSERT INTO ${quoteRelation(rel)} (${list}) SELECT * FROM (\n${feed.sql}\n) AS _s`);
        return { rows, bytes: 0 };
      }
      if (feed.kind === 'pg-csv') return loadPgCsv(s, rel, columns, feed, log);
      throw new EngineError('internal', 'a DuckDB target takes PostgreSQL CSV or DuckDB SQL');
    },
  };
  return target;
}
