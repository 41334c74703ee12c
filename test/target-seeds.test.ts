/**
 * Seed loads on real PostgreSQL and DuckDB: typed columns,
 * text kept byte for byte (a leading-zero code stays `007`), NULL distinct
 * from the empty string, reloads replace, a view of the same name is
 * replaced, no temp table is left, and Parquet files load with their schema.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { errorChain } from '../engine/errors.js';
import { closeDuckdbInstance, duckdbInstance } from '../engine/targets/duckdb/instance-cache.js';
import { openTarget } from '../engine/targets/index.js';
import type { Relation, SeedTableData, TargetSession } from '../engine/targets/target.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

type Probe = (sql: string) => Promise<unknown[][]>;

const ctx = { source: 'env_var' as const, baseDir: '/', cwd: '/' };
const S: Relation = { schema: 'seeds', name: 'codes' };
const opts = { seedName: 'codes', runId: 'seedrn', dropCascade: false };

const CODES: SeedTableData = {
  columns: [
    { name: 'zip', type: 'text' },
    { name: 'qty', type: 'integer' },
    { name: 'price', type: 'float' },
    { name: 'flag', type: 'boolean' },
    { name: 'day', type: 'date' },
    { name: 'memo', type: 'text' },
    { name: 'seen_at', type: 'timestamptz' },
    { name: 'doc', type: 'json' },
  ],
  rows: [
    ['007', '1', '1.50', 'true', '2024-01-01', 'hello, "world"', '2024-01-02T03:04:05Z', '{"a": 1}'],
    ['010', '2', '2', 'false', '2024-01-02', '', null, null],
    ['null', null, null, null, null, null, '2024-01-02 05:04:05+02:00', '[1, 2]'],
  ],
};

async function makeParquet(dir: string): Promise<string> {
  const file = join(dir, 'events.parquet');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  await c.run(`copy (select * from (values
      (1::bigint, '001', 12.34::decimal(10,2), timestamptz '2024-01-01 10:00:00+00', {'k': 1}),
      (2::bigint, '', null, null, {'k': 2}),
      (3::bigint, null, 0.5::decimal(10,2), timestamptz '2024-03-01 00:00:00.25+00', null)
    ) as v(id, code, amount, ts, payload)) to '${file}' (format parquet)`);
  c.closeSync();
  inst.closeSync();
  return file;
}

async function scenarios(t: TestContext, s: TargetSession, probe: Probe, types: string[], parquetTypes: string[], dir: string): Promise<void> {
  await s.createSchemas([{ schema: 'seeds' }]);
  const columnTypes = async (name: string) =>
    (await probe(`select data_type from information_schema.columns where table_schema = 'seeds' and table_name = '${name}' order by ordinal_position`)).map((r) => r[0]);

  await t.test('loads typed columns; text stays byte for byte; NULL is not the empty string', async () => {
    assert.deepEqual(await s.loadSeed(S, { kind: 'table', table: CODES }, opts), { rows: 3 });
    assert.deepEqual(await columnTypes('codes'), types);
    assert.deepEqual(await probe(`select zip, qty, memo, memo is null from seeds.codes order by zip`), [
      ['007', 1, 'hello, "world"', false],
      ['010', 2, '', false],
      ['null', null, null, true],
    ]);
    assert.deepEqual(await probe(`select count(*) from seeds.codes where seen_at = timestamptz '2024-01-02 03:04:05+00'`), [[2]]);
    assert.deepEqual(await probe(`select count(*) from seeds.codes where flag and price = 1.5 and day = date '2024-01-01'`), [[1]]);
  });

  await t.test('a reload replaces the rows; a view of the same name is replaced', async () => {
    assert.deepEqual(await s.loadSeed(S, { kind: 'table', table: { columns: CODES.columns, rows: CODES.rows.slice(0, 1) } }, opts), { rows: 1 });
    assert.deepEqual(await probe('select count(*) from seeds.codes'), [[1]]);
    await s.view(S, 'select 1 as x', { modelName: 'codes', runId: 'seedrn', dropCascade: false });
    assert.deepEqual(await s.loadSeed(S, { kind: 'table', table: CODES }, opts), { rows: 3 });
    assert.equal(await s.relationKind(S), 'table');
  });

  await t.test('a header-only seed creates an empty table', async () => {
    const empty: SeedTableData = { columns: [{ name: 'a', type: 'text' }], rows: [] };
    assert.deepEqual(await s.loadSeed({ schema: 'seeds', name: 'empty' }, { kind: 'table', table: empty }, { ...opts, seedName: 'empty' }), { rows: 0 });
    assert.deepEqual(await probe('select count(*) from seeds.empty'), [[0]]);
  });

  await t.test('a value the column type rejects fails with the seed message and keeps the old table', async () => {
    const bad: SeedTableData = { columns: [{ name: 'zip', type: 'integer' }], rows: [['12'], ['x']] };
    let msg = '';
    await s.loadSeed(S, { kind: 'table', table: bad }, opts).catch((e: unknown) => (msg = errorChain(e)));
    assert.match(msg, /^could not load seed 'codes' into seeds\.codes: /);
    assert.deepEqual(await probe('select count(*) from seeds.codes'), [[3]]);
    assert.deepEqual(await probe(`select table_name from information_schema.tables where table_name like '%service_tmp%'`), []);
  });

  await t.test('a parquet file loads with the types of its schema', async () => {
    const file = await makeParquet(dir);
    const P: Relation = { schema: 'seeds', name: 'events' };
    assert.deepEqual(await s.loadSeed(P, { kind: 'parquet', file }, { ...opts, seedName: 'events' }), { rows: 3 });
    assert.deepEqual(await columnTypes('events'), parquetTypes);
    assert.deepEqual(await probe(`select id, code, code is null from seeds.events order by id`), [
      [1, '001', false],
      [2, '', false],
      [3, null, true],
    ]);
    assert.deepEqual(await probe(`select count(*) from seeds.events where ts = timestamptz '2024-03-01 00:00:00.25+00' and amount = 0.5`), [[1]]);
    let msg = '';
    await s.loadSeed(P, { kind: 'parquet', file: join(dir, 'missing.parquet') }, { ...opts, seedName: 'events' }).catch((e: unknown) => (msg = errorChain(e)));
    assert.match(msg, /^could not (read|load) seed 'events'/);
    assert.deepEqual(await probe('select count(*) from seeds.events'), [[3]]);
  });
}

test('postgres seed loads', async (t) => {
  if (!(await requirePg(t))) return;
  const dir = await mkdtemp(join(tmpdir(), 'target-seeds-pg-'));
  const db = await createTempDatabase('target_seeds');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const probe: Probe = async (sql) => (await client.query({ text: sql, rowMode: 'array' })).rows.map((r: unknown[]) => r.map((v) => (typeof v === 'string' && /^\d+$/.test(v) && v.length < 3 ? Number(v) : v)));
  const target = openTarget(connectionFromUrl('PG', db.url, ctx));
  const s = await target.open();
  t.after(async () => {
    await s.close();
    await target.close();
    await client.end();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  await scenarios(
    t,
    s,
    probe,
    ['text', 'bigint', 'double precision', 'boolean', 'date', 'text', 'timestamp with time zone', 'jsonb'],
    ['bigint', 'text', 'numeric', 'timestamp with time zone', 'jsonb'],
    dir,
  );
  await t.test('jsonb values arrive as JSON', async () => {
    assert.deepEqual(await probe(`select payload = '{"k": 1}'::jsonb from seeds.events order by id`), [[true], [false], [null]]);
  });
});

test('duckdb seed loads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'target-seeds-duck-'));
  const file = join(dir, 'wh.duckdb');
  const s = await openTarget(connectionFromUrl('DUCK', `duckdb://${file}`, ctx)).open();
  const raw = await (await duckdbInstance(file)).connect();
  const probe: Probe = async (sql) => (await raw.runAndReadAll(sql)).getRowsJS().map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  t.after(async () => {
    raw.closeSync();
    await s.close();
    await closeDuckdbInstance(file);
    await rm(dir, { recursive: true, force: true });
  });
  await scenarios(
    t,
    s,
    probe,
    ['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'DATE', 'VARCHAR', 'TIMESTAMP WITH TIME ZONE', 'JSON'],
    ['BIGINT', 'VARCHAR', 'DECIMAL(10,2)', 'TIMESTAMP WITH TIME ZONE', 'STRUCT(k INTEGER)'],
    dir,
  );
});
