/**
 * Replication test fixtures: a PostgreSQL table holding every mapped type
 * (with NULLs in every nullable column, quotes, tabs, newlines and
 * backslashes in text), and per-column checksums computed the same way on
 * PostgreSQL and DuckDB so a source and a target can be compared column by
 * column: sums for numbers, otherwise a sum of md5 hashes of `id:value`
 * (order-free, so no sort per column).
 */
import pg from 'pg';
import { duckSql } from './duck-file.js';
import { validateJobFile, type ReplicationFile } from '../../engine/jobs/index.js';

export type Kind = 'int' | 'num' | 'float' | 'text' | 'bool' | 'date' | 'ts' | 'tstz' | 'json' | 'uuid' | 'bytea' | 'time' | 'interval';

/** Column name → how it is checksummed. */
export const ALL_TYPES: Readonly<Record<string, Kind>> = {
  id: 'int', i2: 'int', i4: 'int', i8: 'int', n: 'num', nu: 'num', r: 'float', f: 'float', t: 'text', vc: 'text', b: 'bool',
  d: 'date', ts: 'ts', tstz: 'tstz', j: 'json', js: 'json', u: 'uuid', by: 'bytea', tm: 'time', iv: 'interval',
};

export function allTypesSql(table: string, rows: number): string {
  return `
create table ${table} (
  id bigint primary key, i2 smallint, i4 integer, i8 bigint, n numeric(18,4), nu numeric, r real, f double precision,
  t text, vc varchar(40), b boolean, d date, ts timestamp, tstz timestamptz, j jsonb, js json, u uuid, by bytea, tm time, iv interval);
insert into ${table}
select g,
  case when g % 11 = 1 then null else (g % 32000)::smallint end,
  case when g % 11 = 2 then null else g * 7 - 350000 end,
  case when g % 11 = 3 then null else g::bigint * 1000000007 end,
  case when g % 11 = 4 then null else (g * 1.2345)::numeric(18,4) end,
  case when g % 11 = 5 then null else round(g::numeric / 7, 12) end,
  case when g % 11 = 6 then null else (g * 0.25)::real end,
  case when g % 11 = 7 then null else g * 0.5 - 1000 end,
  case when g % 11 = 8 then null when g % 11 = 9 then '' else 'row "' || g || E'"\\t,\\\\ é\\n' || repeat('x', g % 5) end,
  'v' || g,
  case when g % 11 = 10 then null else g % 2 = 0 end,
  case when g % 13 = 1 then null else date '2000-01-01' + (g % 10000) end,
  case when g % 13 = 2 then null else timestamp '2020-01-01' + g * interval '1.000001 second' end,
  case when g % 13 = 3 then null else timestamptz '2020-06-01 12:00:00+00' + g * interval '1.5 second' end,
  case when g % 13 = 4 then null else jsonb_build_object('k', g, 's', 'x"y', 'a', jsonb_build_array(1, g)) end,
  case when g % 13 = 5 then null else ('{"g": ' || g || '}')::json end,
  case when g % 13 = 6 then null else md5(g::text)::uuid end,
  case when g % 13 = 7 then null else decode(md5(g::text), 'hex') end,
  case when g % 13 = 8 then null else time '00:00:00' + (g % 86400) * interval '1 second' end,
  case when g % 13 = 9 then null else make_interval(months => g % 14, days => g % 30, secs => (g % 3600) + 0.25) end
from generate_series(1, ${rows}) g`;
}

function pgExpr(col: string, kind: Kind): string {
  const c = `"${col}"`;
  const agg = (e: string) => `sum(('x' || substr(md5(id::text || ':' || coalesce(${e}, '~')), 1, 15))::bit(60)::bigint)::text`;
  switch (kind) {
    case 'int':
    case 'num':
      return `coalesce(sum(${c})::text, '') || '/' || count(${c})`;
    case 'float':
      return agg(`${c}::float8::numeric(38,6)::text`);
    case 'text':
      return agg(c);
    case 'bool':
      return `count(*) filter (where ${c}) || '/' || count(${c})`;
    case 'uuid':
      return agg(`${c}::text`);
    case 'date':
      return `coalesce(sum(${c} - date '2000-01-01')::text, '') || '/' || count(${c})`;
    case 'time':
      return `coalesce(sum((extract(epoch from ${c}) * 1000000)::bigint)::text, '') || '/' || count(${c})`;
    case 'ts':
    case 'tstz':
      return `coalesce(sum((extract(epoch from ${c}) * 1000000)::bigint)::text, '') || '/' || count(${c})`;
    case 'json':
      return agg(`${c}::jsonb::text`);
    case 'bytea':
      return agg(`encode(${c}, 'hex')`);
    case 'interval':
      return agg(`((extract(year from ${c}) * 12 + extract(month from ${c}))::int || ':' || extract(day from ${c})::int || ':' || (extract(hour from ${c}) * 3600000000 + extract(minute from ${c}) * 60000000 + extract(microseconds from ${c}))::bigint)`);
  }
}

function duckExpr(col: string, kind: Kind): string {
  const c = `"${col}"`;
  const agg = (e: string) => `CAST(sum(CAST(('0x' || substr(md5(CAST(id AS VARCHAR) || ':' || coalesce(${e}, '~')), 1, 15)) AS BIGINT)) AS VARCHAR)`;
  switch (kind) {
    case 'int':
    case 'num':
      return `coalesce(CAST(sum(${c}) AS VARCHAR), '') || '/' || count(${c})`;
    case 'float':
      return agg(`CAST(CAST(CAST(${c} AS DOUBLE) AS DECIMAL(38,6)) AS VARCHAR)`);
    case 'uuid':
      return agg(`CAST(${c} AS VARCHAR)`);
    case 'date':
      return `coalesce(CAST(sum(${c} - DATE '2000-01-01') AS VARCHAR), '') || '/' || count(${c})`;
    case 'time':
      return `coalesce(CAST(sum(epoch_us(${c})) AS VARCHAR), '') || '/' || count(${c})`;
    case 'text':
      return agg(c);
    case 'bool':
      return `count(*) filter (where ${c}) || '/' || count(${c})`;
    case 'ts':
    case 'tstz':
      return `coalesce(CAST(sum(epoch_us(${c})) AS VARCHAR), '') || '/' || count(${c})`;
    case 'json':
      return agg(`CAST(${c} AS VARCHAR)`);
    case 'bytea':
      return agg(`lower(hex(${c}))`);
    case 'interval':
      return agg(`CAST(datepart('year', ${c}) * 12 + datepart('month', ${c}) AS VARCHAR) || ':' || CAST(datepart('day', ${c}) AS VARCHAR) || ':' || CAST(datepart('hour', ${c}) * 3600000000 + datepart('minute', ${c}) * 60000000 + datepart('microseconds', ${c}) AS VARCHAR)`);
  }
}

/** `{rows, <col>: checksum}` of a PostgreSQL table. */
export async function pgChecksums(url: string, table: string, columns: Readonly<Record<string, Kind>> = ALL_TYPES): Promise<Record<string, string>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const exprs = Object.entries(columns).map(([col, k]) => `${pgExpr(col, k)} as "${col}"`);
    const r = await c.query(`select count(*)::text as rows, ${exprs.join(', ')} from ${table}`);
    return r.rows[0] as Record<string, string>;
  } finally {
    await c.end();
  }
}

/** The same checksums of a table in a DuckDB file (through the file's actor, its one owner in this process). */
export async function duckChecksums(path: string, table: string, columns: Readonly<Record<string, Kind>> = ALL_TYPES): Promise<Record<string, string>> {
  const exprs = Object.entries(columns).map(([col, k]) => `${duckExpr(col, k)} as "${col}"`);
  const rows = await duckSql<Record<string, unknown>[]>(path, `select CAST(count(*) AS VARCHAR) as rows, ${exprs.join(', ')} from ${table}`, 'objects-js');
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, String(v)]));
}

export async function duckRows(path: string, sql: string): Promise<unknown[][]> {
  return (await duckSql<unknown[][]>(path, sql, 'rows-js')).map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
}

export async function pgQuery(url: string, sql: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** A replication file from YAML, validated as the daemon does (connection kinds given). */
export function replicationFile(yaml: string, kinds: Readonly<Record<string, 'database' | 'file'>> = {}): ReplicationFile {
  const v = validateJobFile('r.yaml', yaml, { fileExists: () => true, connectionKind: (n) => kinds[n] }, { as: 'replication' });
  if (v.kind !== 'replication' || v.parsed === undefined) throw new Error(`invalid replication file: ${JSON.stringify(v.problems)}`);
  return v.parsed;
}
