/**
 * Parquet seeds on PostgreSQL: PostgreSQL cannot read Parquet, so
 * the file is read by a private in-memory DuckDB (no database file is
 * opened, so the one-instance-per-file rule does not apply) and streamed as
 * COPY CSV. Column types come from the file's schema, mapped to the nearest
 * PostgreSQL type; nested values become jsonb.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { quoteString } from '../literal.js';
import { quoteIdent } from '../relation.js';
import { COPY_CHUNK_CHARS, csvLine, type CopyPlan } from './copy-csv.js';

const SCALAR_TYPES: Readonly<Record<string, string>> = {
  BOOLEAN: 'boolean',
  TINYINT: 'smallint',
  SMALLINT: 'smallint',
  INTEGER: 'integer',
  BIGINT: 'bigint',
  HUGEINT: 'numeric(39,0)',
  UTINYINT: 'smallint',
  USMALLINT: 'integer',
  UINTEGER: 'bigint',
  UBIGINT: 'numeric(20,0)',
  FLOAT: 'real',
  DOUBLE: 'double precision',
  VARCHAR: 'text',
  BLOB: 'bytea',
  DATE: 'date',
  TIME: 'time',
  TIMESTAMP: 'timestamp',
  TIMESTAMP_S: 'timestamp',
  TIMESTAMP_MS: 'timestamp',
  TIMESTAMP_NS: 'timestamp',
  'TIMESTAMP WITH TIME ZONE': 'timestamptz',
  UUID: 'uuid',
  INTERVAL: 'interval',
  JSON: 'jsonb',
};

function isNested(duckType: string): boolean {
  return /\]$/.test(duckType) || /^(STRUCT|MAP|UNION)\(/.test(duckType);
}

export function postgresTypeFor(duckType: string): string {
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(duckType);
  if (decimal) return `numeric(${decimal[1]},${decimal[2]})`;
  if (isNested(duckType)) return 'jsonb';
  return SCALAR_TYPES[duckType] ?? 'text';
}

/** A DuckDB expression rendering column `c` as text PostgreSQL's input functions accept. */
function textExpr(c: string, duckType: string): string {
  if (isNested(duckType) || duckType === 'JSON') return `CAST(to_json(${c}) AS VARCHAR)`;
  if (duckType === 'BLOB') return `'\\x' || hex(${c})`;
  if (duckType === 'TIMESTAMP WITH TIME ZONE') return `strftime(${c} AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f') || '+00'`;
  return `CAST(${c} AS VARCHAR)`;
}

async function* csvChunks(conn: DuckDBConnection, sql: string): AsyncGenerator<string> {
  const result = await conn.stream(sql);
  let buf = '';
  for (;;) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) break;
    for (const row of chunk.getRows()) {
      buf += csvLine(row.map((v) => (v === null ? null : String(v))));
      if (buf.length >= COPY_CHUNK_CHARS) {
        yield buf;
        buf = '';
      }
    }
  }
  if (buf !== '') yield buf;
}

export async function readParquetForCopy(file: string): Promise<CopyPlan> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const close = () => {
    conn.closeSync();
    instance.closeSync();
  };
  try {
    const src = `read_parquet(${quoteString(file)})`;
    const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRowsJS();
    const cols = described.map((r) => ({ name: String(r[0]), duckType: String(r[1]) }));
    const select = cols.map((c) => `${textExpr(quoteIdent(c.name), c.duckType)} AS ${quoteIdent(c.name)}`).join(', ');
    return {
      columns: cols.map((c) => ({ name: c.name, type: postgresTypeFor(c.duckType) })),
      chunks: csvChunks(conn, `SELECT ${select} FROM ${src}`),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}
