// Replication in every direction among PostgreSQL, DuckDB and files,
// on a 100,000-row table holding every mapped type with NULLs: the
// row count and a checksum of every column match between source and target
// (sums for numbers, sums of md5 hashes of `id:value` otherwise), and the
// target column types are the mapped ones, so PostgreSQL → DuckDB →
// PostgreSQL round-trips integers, numerics, text, booleans, dates,
// timestamps with and without time zone, JSON, uuid, bytea, time and
// interval without loss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ALL_TYPES, allTypesSql, duckChecksums, duckRows, pgChecksums, pgQuery, replicationFile, type Kind } from './helpers/replication-fixtures.js';
import { replicationSuite, type ReplicationEnv } from './helpers/replication-env.js';

const ROWS = 100_000;
let source: Record<string, string> = {};

const ready = replicationSuite('repl_dirs', async (env) => {
  await pgQuery(env.db.url, 'create schema src');
  await pgQuery(env.db.url, allTypesSql('src.all_types', ROWS));
  source = await pgChecksums(env.db.url, 'src.all_types');
});

function pick(all: Record<string, string>, columns: Readonly<Record<string, Kind>>): Record<string, string> {
  return Object.fromEntries(['rows', ...Object.keys(columns)].map((k) => [k, all[k]!]));
}

async function runOk(e: ReplicationEnv, yaml: string): Promise<void> {
  const r = await e.run(replicationFile(yaml));
  assert.equal(r.status, 'success', JSON.stringify(r.tasks));
  assert.equal(r.rows, ROWS);
}

test('sanity: the fixture has NULLs in every nullable column', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const cols = Object.keys(ALL_TYPES).filter((c) => c !== 'id' && c !== 'vc');
  const r = await pgQuery(e.db.url, `select ${cols.map((c) => `count(*) - count("${c}") as "${c}"`).join(', ')} from src.all_types`);
  for (const c of cols) assert.ok(Number(r[0][c]) > 0, `${c} has NULLs`);
});

test('PostgreSQL → DuckDB: every column matches; types map to their DuckDB twins', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await runOk(e, "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: '{target_schema}.{stream_table}'\nstreams:\n  src.all_types:\n");
  assert.deepEqual(await duckChecksums(e.lake, 'main.all_types'), source);
  const types = await duckRows(e.lake, "select column_name || ' ' || data_type from information_schema.columns where table_schema = 'main' and table_name = 'all_types' order by ordinal_position");
  assert.deepEqual(types.map((r) => r[0]), [
    'id BIGINT', 'i2 SMALLINT', 'i4 INTEGER', 'i8 BIGINT', 'n DECIMAL(18,4)', 'nu DECIMAL(18,12)', 'r FLOAT', 'f DOUBLE', 't VARCHAR', 'vc VARCHAR',
    'b BOOLEAN', 'd DATE', 'ts TIMESTAMP', 'tstz TIMESTAMP WITH TIME ZONE', 'j JSON', 'js JSON', 'u UUID', 'by BLOB', 'tm TIME', 'iv INTERVAL',
  ]);
});

test('DuckDB → PostgreSQL: the DuckDB copy comes back identical to the original', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await runOk(e, 'source: LAKE\ntarget: WAREHOUSE\nstreams:\n  main.all_types:\n    object: back.all_types\n');
  assert.deepEqual(await pgChecksums(e.db.url, 'back.all_types'), source);
  const types = await pgQuery(e.db.url, "select string_agg(column_name || ' ' || format_type(atttypid, atttypmod), ', ' order by attnum) as t from information_schema.columns c join pg_attribute a on a.attrelid = 'back.all_types'::regclass and a.attname = c.column_name where c.table_schema = 'back' and c.table_name = 'all_types'");
  assert.equal(types[0].t, 'id bigint, i2 smallint, i4 integer, i8 bigint, n numeric(18,4), nu numeric(18,12), r real, f double precision, t text, vc text, b boolean, d date, ts timestamp without time zone, tstz timestamp with time zone, j jsonb, js jsonb, u uuid, by bytea, tm time without time zone, iv interval');
});

test('PostgreSQL → PostgreSQL: COPY piped through keeps the exact types', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await runOk(e, 'source: WAREHOUSE\ntarget: PGTWO\nstreams:\n  src.all_types:\n    object: copy.all_types\n');
  assert.deepEqual(await pgChecksums(e.db.url, 'copy.all_types'), source);
  const vc = await pgQuery(e.db.url, "select format_type(atttypid, atttypmod) as t from pg_attribute where attrelid = 'copy.all_types'::regclass and attname in ('vc', 'js') order by attname");
  assert.deepEqual(vc.map((r) => r.t), ['json', 'character varying(40)']);
});

test('PostgreSQL → Parquet file → PostgreSQL and → DuckDB: every column matches', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await runOk(e, 'source: WAREHOUSE\ntarget: FILES\nstreams:\n  src.all_types:\n    object: out/all_types.parquet\n');
  await runOk(e, 'source: FILES\ntarget: WAREHOUSE\nstreams:\n  out/all_types.parquet:\n    object: fromfile.all_types\n');
  assert.deepEqual(await pgChecksums(e.db.url, 'fromfile.all_types'), source);
  await runOk(e, "source: FILES\ntarget: LAKE\nstreams:\n  out/*.parquet:\n    object: 'files.{stream_file_name}'\n");
  assert.deepEqual(await duckChecksums(e.lake, 'files.all_types'), source);
});

test('CSV and JSON lines files both ways: the columns those formats carry match', async (t) => {
  const e = await ready(t);
  if (!e) return;
  // CSV and JSON carry no column types: the reader infers them, so compare what survives inference.
  const csvCols: Record<string, Kind> = { id: 'int', i4: 'int', i8: 'int', t: 'text', vc: 'text', b: 'bool', d: 'date', ts: 'ts', tstz: 'tstz' };
  await runOk(e, "source: WAREHOUSE\ntarget: FILES\nstreams:\n  src.all_types:\n    object: out/csv/all_types.csv\n    target_options: {delimiter: ';'}\n");
  await runOk(e, "source: FILES\ntarget: WAREHOUSE\nstreams:\n  out/csv/all_types.csv:\n    object: fromcsv.all_types\n    source_options: {delimiter: ';', empty_as_null: false}\n");
  assert.deepEqual(await pgChecksums(e.db.url, 'fromcsv.all_types', csvCols), pick(source, csvCols));
  const jsonCols: Record<string, Kind> = { id: 'int', i4: 'int', i8: 'int', t: 'text', vc: 'text', b: 'bool', d: 'date' };
  await runOk(e, 'source: LAKE\ntarget: FILES\nstreams:\n  main.all_types:\n    object: out/all_types.jsonl\n');
  await runOk(e, 'source: FILES\ntarget: LAKE\nstreams:\n  out/all_types.jsonl:\n    object: fromjson.all_types\n');
  assert.deepEqual(await duckChecksums(e.lake, 'fromjson.all_types', jsonCols), pick(source, jsonCols));
});

test('DuckDB → files with file_max_rows writes numbered parts that add up to the table', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await runOk(e, 'source: LAKE\ntarget: FILES\nstreams:\n  main.all_types:\n    object: parts/all_types.parquet\n    target_options: {file_max_rows: 30000}\n');
  const parts = (await readdir(path.join(e.files, 'parts'))).sort();
  assert.deepEqual(parts, ['all_types_001.parquet', 'all_types_002.parquet', 'all_types_003.parquet', 'all_types_004.parquet']);
  await runOk(e, 'source: FILES\ntarget: LAKE\nstreams:\n  parts/:\n    object: parts.all_types\n');
  assert.deepEqual(await duckChecksums(e.lake, 'parts.all_types'), source);
});
