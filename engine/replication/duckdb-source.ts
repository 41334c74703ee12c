/**
 * DuckDB as a replication source — a database file (through its actor's
 * connection) or files read by DuckDB's readers (`read_csv`, `read_json`,
 * `read_parquet`). Columns come from `DESCRIBE`; rows go to PostgreSQL as CSV
 * written by DuckDB (duckdb-csv-out.ts), or to a DuckDB target on the same connection as
 * one `INSERT … SELECT`.
 */
import { quoteRelation } from '../targets/relation.js';
import type { SourceOptions } from '../jobs/replication-model.js';
import { duckColumn, type Dialect, type SourceColumn } from './column-types.js';
import type { DuckSession } from './duck-session.js';
import { flattenedFrom } from './json-flatten.js';
import type { Feed } from './feed.js';
import { sqlFrom } from './pg-source.js';
import type { FileEntry, FileFormat, SourceRead, StreamPlan } from './plan-types.js';
import { duckCsvOut } from './duckdb-csv-out.js';
import { buildSourceQuery, loadedAtColumn, selectColumns, sqlString } from './source-query.js';
import type { FeedRequest, PreparedSource } from './table-load.js';

function option(name: string, value: string | boolean | undefined): string[] {
  if (value === undefined) return [];
  return [`${name}=${typeof value === 'boolean' ? String(value) : sqlString(value)}`];
}

/** A DuckDB reader call over `files` honouring `source_options`. */
export function fileReader(files: readonly FileEntry[], format: FileFormat, o: SourceOptions): string {
  const list = `[${files.map((f) => sqlString(f.path)).join(', ')}]`;
  const compression = o.compression === 'none' ? 'none' : o.compression === 'gzip' ? 'gzip' : undefined;
  if (format === 'parquet') return `read_parquet(${list}, union_by_name=true)`;
  if (format === 'json' || format === 'jsonlines') {
    const args = [
      `format=${format === 'jsonlines' ? "'newline_delimited'" : "'auto'"}`,
      ...option('compression', compression),
      ...option('timestampformat', o.datetime_format),
      'union_by_name=true',
    ];
    return `read_json(${list}, ${args.join(', ')})`;
  }
  const emptyAsNull = o.empty_as_null !== false;
  const args = [
    `header=${o.header !== false}`,
    ...option('delim', o.delimiter),
    ...option('quote', o.quote),
    ...option('escape', o.escape),
    ...option('compression', compression),
    ...option('timestampformat', o.datetime_format),
    ...option('nullstr', o.null_if),
    // An unquoted empty field is NULL; `empty_as_null` (default true) makes a quoted empty field NULL too.
    `allow_quoted_nulls=${emptyAsNull}`,
    'union_by_name=true',
  ];
  return `read_csv(${list}, ${args.join(', ')})`;
}

/** FROM text of a DuckDB-side source. */
export function duckFrom(read: SourceRead, options: SourceOptions): string {
  if (read.kind === 'table') return quoteRelation({ schema: read.schema, name: read.table });
  if (read.kind === 'sql') return sqlFrom(read.sql);
  return fileReader(read.files, read.format, options);
}

export async function prepareDuckSource(s: DuckSession, plan: StreamPlan, read: string, target: Dialect, log?: (line: string) => void): Promise<PreparedSource> {
  let from = read;
  if (plan.sourceOptions.flatten === true) {
    const flat = await flattenedFrom(s, read);
    from = flat.from;
    log?.(flat.flattened > 0 ? `flatten: ${flat.flattened} nested column(s) split into columns named by their path (a__b)` : 'flatten: the source has no nested objects to split');
  }
  const described = await s.rows(`DESCRIBE SELECT * FROM ${from}`);
  const all = described.map((r) => duckColumn(String(r[0]), String(r[1])));
  const columns = selectColumns(all, plan.select, plan.streamName);
  const where = plan.where;
  const limit = plan.sourceOptions.limit;
  return {
    dialect: 'duckdb',
    columns,
    feed(req: FeedRequest): Feed {
      // FeedRequest's fields are the query's own; undefined ones add nothing.
      const query = buildSourceQuery({ ...req, source: 'duckdb', target, from, where, limit });
      if (target === 'duckdb') return { kind: 'duckdb-sql', sql: query };
      const cols: SourceColumn[] = req.loadedAt !== undefined ? [...req.columns, loadedAtColumn('duckdb')] : [...req.columns];
      return { kind: 'csv', open: () => duckCsvOut(s, query, cols) };
    },
    concrete: async (cols) => [...cols],
  };
}
