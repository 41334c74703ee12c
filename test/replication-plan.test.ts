// Replication planning and SQL text, without a database:
// stream expansion (wildcards sorted, explicit keys win, globs, folders, the
// job's subset), object templates with every variable, `${NAME}` resolution
// and the file's `env:` layer, run-time mode checks, the source SELECT, merge
// statements and column casing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../engine/connections/index.js';
import { ddlType, pgColumn, duckColumn, decimalFromProbe } from '../engine/replication/column-types.js';
import { expandStreams, selectStreams, type SourceCatalog } from '../engine/replication/expand.js';
import { castColumnName } from '../engine/replication/column-casing.js';
import { mergeSql } from '../engine/targets/merge-sql.js';
import { fileEnvLookup, planReplication } from '../engine/replication/plan.js';
import { renderObject, templateVariables } from '../engine/replication/object-template.js';
import { buildSourceQuery, duckCsvLineQuery, selectColumns } from '../engine/replication/source-query.js';
import type { FileEntry } from '../engine/replication/plan-types.js';
import { replicationFile } from './helpers/replication-fixtures.js';

const PG: Connection = { type: 'postgres', name: 'WAREHOUSE', source: 'project', host: 'h', port: 5432, user: 'u', password: 'pw', database: 'd', sslmode: 'disable', schema: 'public' };
const LAKE: Connection = { type: 'duckdb', name: 'LAKE', source: 'project', path: '/tmp/lake.duckdb', schema: 'main' };
const FILES: Connection = { type: 'file', name: 'Files', source: 'project', url: 'file:///srv/exports' };

function catalog(tables: Record<string, string[]>, files: FileEntry[] = []): SourceCatalog {
  return {
    tables: async (schema) => tables[schema] ?? [],
    files: async (key) => files.filter((f) => (key.endsWith('/') ? f.relative.startsWith(key) : key.includes('*') ? new RegExp(`^${key.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(f.relative) : f.relative === key)),
  };
}

const file = (relative: string): FileEntry => ({ path: `/srv/exports/${relative}`, relative, mtimeMs: 1, size: 10 });

test('wildcards expand to sorted tables; an explicit key wins; a prefix wildcard; the subset keeps named streams and wildcard keys', async () => {
  const f = replicationFile("source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: 'x.{stream_table}'\nstreams:\n  public.*:\n  public.users:\n    mode: truncate\n  sales.ord_*:\n  daily:\n    sql: select 1\n");
  const streams = await expandStreams(f, 'database', 'public', catalog({ public: ['zeta', 'users', 'alpha'], sales: ['orders', 'ord_2024', 'ord_2023'] }));
  assert.deepEqual(streams.map((s) => [s.name, s.key, s.source.kind]), [
    ['public.alpha', 'public.*', 'table'],
    ['public.zeta', 'public.*', 'table'],
    ['public.users', 'public.users', 'table'],
    ['sales.ord_2023', 'sales.ord_*', 'table'],
    ['sales.ord_2024', 'sales.ord_*', 'table'],
    ['daily', 'daily', 'sql'],
  ]);
  assert.deepEqual(selectStreams(streams, ['public.zeta', 'sales.ord_*']).map((s) => s.name), ['public.zeta', 'sales.ord_2023', 'sales.ord_2024']);
  assert.equal(selectStreams(streams, []).length, 6);
});

test('file keys: one path, a folder into one stream, a glob into one stream per file', async () => {
  const f = replicationFile("source: Files\ntarget: LAKE\ndefaults:\n  object: 'raw.{stream_file_name}'\nstreams:\n  in/*.csv:\n  in/b.csv:\n    mode: truncate\n  dump/:\n  one.parquet:\n", { Files: 'file' });
  const streams = await expandStreams(f, 'file', '', catalog({}, [file('in/c.csv'), file('in/a.csv'), file('in/b.csv'), file('dump/x.json'), file('dump/y.json'), file('one.parquet')]));
  assert.deepEqual(streams.map((s) => [s.name, s.source.kind === 'files' ? s.source.files.map((x) => x.relative) : []]), [
    ['in/a.csv', ['in/a.csv']],
    ['in/c.csv', ['in/c.csv']],
    ['in/b.csv', ['in/b.csv']],
    ['dump/', ['dump/x.json', 'dump/y.json']],
    ['one.parquet', ['one.parquet']],
  ]);
  const plans = planReplication({ file: f, source: FILES, target: LAKE, streams, lookup: () => undefined, start: new Date(), execId: 'e', readProjectFile: () => '' });
  assert.deepEqual(plans.map((p) => [p.taskId, p.object, p.read?.kind === 'files' ? p.read.format : null]), [
    ['task_1', 'raw.a', 'csv'], ['task_2', 'raw.c', 'csv'], ['task_3', 'raw.b', 'csv'], ['task_4', 'raw.dump', 'json'], ['task_5', 'raw.one', 'parquet'],
  ]);
});

test('object templates: every variable from the stream, the connections and the execution start (UTC)', () => {
  const vars = templateVariables({ name: 'Sales.Orders', schema: 'Sales', table: 'Orders' }, { sourceName: 'WAREHOUSE', targetName: 'LAKE', targetSchema: 'main', start: new Date('2025-03-01T08:05:09Z') });
  assert.equal(
    renderObject('{target_schema}.{stream_schema}_{stream_table}|{stream_schema_lower}{stream_table_lower}|{stream_schema_upper}{stream_table_upper}|{stream_name}|{source_name}>{target_name}|{run_timestamp}|{YYYY}{MM}{DD}{HH}', vars),
    'main.Sales_Orders|salesorders|SALESORDERS|Sales.Orders|warehouse>lake|2025_03_01_080509|2025030108',
  );
  const f = templateVariables({ name: 'in/2024/users.csv.gz', schema: '', table: 'users', filePath: 'in/2024/users.csv.gz' }, { sourceName: 'F', targetName: 'T', targetSchema: 'public', start: new Date(0) });
  assert.equal(renderObject('{stream_file_folder}|{stream_file_name}|{stream_file_ext}|{stream_file_path}|${KEEP}', f), 'in/2024|users|csv|in/2024/users.csv.gz|${KEEP}');
});

test('plans: defaults merged, ${NAME} from run vars over the file env over the env layers, unresolved names and mode checks fail only their task', async () => {
  const f = replicationFile([
    'source: WAREHOUSE',
    'target: LAKE',
    'defaults:',
    "  object: '{target_schema}.{stream_table}'",
    '  where: "region = \'${REGION}\'"',
    '  target_options: {pre_sql: "select 1"}',
    'streams:',
    '  public.a:',
    '    select: [-secret]',
    '    target_options: {column_casing: snake}',
    '  public.b:',
    "    object: '${SCHEMA}.b'",
    '  public.c:',
    '    mode: backfill',
    '    primary_key: id',
    '    update_key: ts',
    '    source_options: {range: "2024-01-01, ${END}"}',
    '  public.d:',
    '    disabled: true',
    'env:',
    '  REGION: eu',
    "  END: '${LATER}'",
    '',
  ].join('\n'));
  const streams = await expandStreams(f, 'database', 'public', catalog({}));
  const lookup = fileEnvLookup(f.env, (n) => (n === 'SCHEMA' ? 'run_schema' : undefined), (n) => (n === 'LATER' ? '2024-12-31' : n === 'REGION' ? 'us' : undefined));
  const plans = planReplication({ file: f, source: PG, target: LAKE, streams, lookup, start: new Date('2025-01-01T00:00:00Z'), execId: '2pKTbxTNJFoBinF5aJXVuLkSIc4', readProjectFile: () => '' });
  assert.deepEqual(plans.map((p) => [p.streamName, p.object, p.mode, p.where, p.error ?? null, p.disabled]), [
    ['public.a', 'main.a', 'full-refresh', "region = 'eu'", null, false],
    ['public.b', 'run_schema.b', 'full-refresh', "region = 'eu'", null, false],
    ['public.c', 'main.c', 'backfill', "region = 'eu'", null, false],
    ['public.d', 'main.d', 'full-refresh', "region = 'eu'", null, true],
  ]);
  assert.deepEqual(plans[0]!.select, ['-secret']);
  assert.deepEqual(plans[0]!.targetOptions, { pre_sql: 'select 1', column_casing: 'snake' });
  assert.deepEqual(plans[2]!.range, ['2024-01-01', '2024-12-31']);
  const missing = planReplication({ file: f, source: PG, target: LAKE, streams, lookup: () => undefined, start: new Date(), execId: 'x', readProjectFile: () => '' });
  assert.deepEqual(missing.map((p) => p.error), ['variable REGION is not set', 'variable SCHEMA is not set', 'variable END is not set', 'variable REGION is not set']);
  const forced = planReplication({ file: f, source: PG, target: FILES, streams, lookup, modeOverride: 'incremental', start: new Date(), execId: 'x', readProjectFile: () => '' });
  assert.equal(forced[0]!.error, 'mode incremental requires primary_key and/or update_key');
  assert.equal(forced[2]!.error, 'mode incremental is not supported for file targets');
});

test('source SELECT: selection with exclusions, where, watermark and range with typed literals, snapshot time, limit', () => {
  const cols = [pgColumn('id', 'integer', true), pgColumn('name', 'text', true), pgColumn('secret', 'text', true), pgColumn('ts', 'timestamp with time zone', true), pgColumn('raw', 'bytea', true), pgColumn('tags', 'text[]', true)];
  assert.deepEqual(selectColumns(cols, ['-SECRET'], 's').map((c) => c.name), ['id', 'name', 'ts', 'raw', 'tags']);
  assert.deepEqual(selectColumns(cols, ['name', 'id'], 's').map((c) => c.name), ['name', 'id']);
  assert.throws(() => selectColumns(cols, ['nope'], 's.t'), /select: column "nope" not found in stream s\.t/);
  const ts = cols[3]!;
  assert.equal(
    buildSourceQuery({ source: 'postgres', target: 'duckdb', from: '"public"."t"', columns: [cols[0]!, cols[4]!, cols[5]!, pgColumn('at', 'time with time zone', true), pgColumn('cash', 'money', true)], where: "name <> 'x'", after: { column: ts, value: "2024-01-01 00:00:00+00" }, loadedAt: '2025-01-01T00:00:00.000Z', limit: 5 }),
    // Binary COPY to DuckDB: bytea as it is, arrays as jsonb, types without a binary decoder as text.
    `SELECT "id", "raw", to_jsonb("tags") AS "tags", "at"::text AS "at", "cash"::text AS "cash", CAST('2025-01-01T00:00:00.000Z' AS timestamp with time zone) AS "_service_loaded_at" FROM "public"."t"\nWHERE (name <> 'x') AND "ts" > CAST('2024-01-01 00:00:00+00' AS timestamp with time zone)\nLIMIT 5`,
  );
  assert.equal(
    buildSourceQuery({ source: 'duckdb', target: 'postgres', from: '"main"."t"', columns: [duckColumn('id', 'INTEGER')], range: { column: duckColumn('d', 'DATE'), start: "2024-01-01", end: "2024-01-31" } }),
    `SELECT "id" FROM "main"."t"\nWHERE "d" >= CAST('2024-01-01' AS DATE) AND "d" <= CAST('2024-01-31' AS DATE)`,
  );
  assert.equal(
    duckCsvLineQuery('SELECT 1', [duckColumn('i', 'BIGINT'), duckColumn('s', 'VARCHAR'), duckColumn('b', 'BLOB'), duckColumn('l', 'INTEGER[]')]),
    `SELECT concat(CAST("i" AS VARCHAR), ',', '"' || replace(CAST("s" AS VARCHAR), '"', '""') || '"', ',', '\\x' || hex("b"), ',', '"' || replace(CAST(to_json("l") AS VARCHAR), '"', '""') || '"', chr(10)) AS line FROM (\nSELECT 1\n) AS _r`,
  );
});

test('type mapping: PostgreSQL ↔ DuckDB twins; same-dialect keeps the source type; unconstrained numerics sized from the data', () => {
  const pgTypes = ['smallint', 'integer', 'bigint', 'numeric(18,4)', 'real', 'double precision', 'boolean', 'character varying(20)', 'date', 'time without time zone', 'timestamp without time zone', 'timestamp with time zone', 'interval', 'jsonb', 'uuid', 'bytea', 'integer[]'];
  assert.deepEqual(pgTypes.map((t) => ddlType('postgres', 'duckdb', pgColumn('c', t, true))), [
    'SMALLINT', 'INTEGER', 'BIGINT', 'DECIMAL(18,4)', 'FLOAT', 'DOUBLE', 'BOOLEAN', 'VARCHAR', 'DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMPTZ', 'INTERVAL', 'JSON', 'UUID', 'BLOB', 'JSON',
  ]);
  assert.equal(ddlType('postgres', 'postgres', pgColumn('c', 'character varying(20)', true)), 'character varying(20)');
  assert.equal(ddlType('postgres', 'postgres', pgColumn('c', 'mood', false)), 'text');
  const duck = ['TINYINT', 'HUGEINT', 'UBIGINT', 'DECIMAL(38,10)', 'TIMESTAMP_NS', 'TIMESTAMP WITH TIME ZONE', 'JSON', 'STRUCT(a INTEGER)', 'VARCHAR[]', 'BLOB'];
  assert.deepEqual(duck.map((t) => ddlType('duckdb', 'postgres', duckColumn('c', t))), [
    'smallint', 'numeric(39,0)', 'numeric(20,0)', 'numeric(38,10)', 'timestamp', 'timestamp with time zone', 'jsonb', 'jsonb', 'jsonb', 'bytea',
  ]);
  const nu = pgColumn('c', 'numeric', true);
  assert.equal(ddlType('postgres', 'duckdb', decimalFromProbe(nu, 5, 12)), 'DECIMAL(18,12)');
  assert.equal(ddlType('postgres', 'duckdb', decimalFromProbe(nu, 20, 10)), 'DECIMAL(38,10)');
  assert.equal(ddlType('postgres', 'duckdb', decimalFromProbe(nu, 40, 2)), 'VARCHAR');
});

test('merge statements per strategy (the build generator, which replication streams use too); column casing', () => {
  const T = { schema: 's', name: 't' };
  const ST = { schema: 'pg_temp', name: 'st' };
  assert.deepEqual(mergeSql(T, ST, ['id', 'v'], ['id'], 'update+insert'), [
    'UPDATE "s"."t" AS tgt SET "v" = src."v" FROM "pg_temp"."st" AS src WHERE tgt."id" = src."id"',
    'INSERT INTO "s"."t" ("id", "v") SELECT "id", "v" FROM "pg_temp"."st" AS src WHERE NOT EXISTS (SELECT 1 FROM "s"."t" AS tgt WHERE tgt."id" = src."id")',
  ]);
  assert.deepEqual(mergeSql(T, ST, ['id', 'v'], ['id'], 'delete+insert'), [
    'DELETE FROM "s"."t" AS tgt WHERE EXISTS (SELECT 1 FROM "pg_temp"."st" AS src WHERE src."id" = tgt."id")',
    'INSERT INTO "s"."t" ("id", "v") SELECT "id", "v" FROM "pg_temp"."st"',
  ]);
  assert.deepEqual(mergeSql(T, ST, ['id', 'v'], ['id'], 'update'), ['UPDATE "s"."t" AS tgt SET "v" = src."v" FROM "pg_temp"."st" AS src WHERE tgt."id" = src."id"']);
  assert.deepEqual(mergeSql(T, ST, ['id'], ['id'], 'update'), []);
  assert.deepEqual(['UserID', 'createdAt', 'HTTPStatus Code', 'a-b'].map((n) => castColumnName(n, 'snake')), ['user_id', 'created_at', 'http_status_code', 'a_b']);
  assert.deepEqual(['UserID'].flatMap((n) => [castColumnName(n, 'lower'), castColumnName(n, 'upper'), castColumnName(n, 'source')]), ['userid', 'USERID', 'UserID']);
});
