/**
 * A dbt project covering the supported features
 * (test/fixtures/dbt-features) builds unchanged on DuckDB and PostgreSQL:
 * folder configs and config(), custom schemas `<target>_<custom>`, alias,
 * ephemeral CTEs, incremental append / merge / delete+insert with
 * is_incremental() and on_schema_change, seeds' column_types / delimiter /
 * quote_columns, sources (Jinja in the schema) with tests, custom generic
 * tests with severity / where / warn_if / error_if, a singular test, macros
 * with adapter.dispatch / return / modules.datetime / log /
 * raise_compiler_error, an installed package's namespace, persist_docs,
 * post-hooks, enabled: false.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { build, tempDir, withEnv } from './helpers/build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { duckWarehouse } from './helpers/warehouse.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'dbt-features');
const EVENTS_2 = 'id,kind,updated_at\n1,a,2024-01-01\n2,b,2024-01-02\n3,c2,2024-01-05\n4,d,2024-01-05\n';

function features(): string {
  const dir = tempDir('dbt-features-');
  cpSync(FIXTURE, dir, { recursive: true, filter: (src) => !src.endsWith('.duckdb') });
  return dir;
}

type Query = (sql: string) => Promise<Record<string, string | null>[]>;

interface Payload {
  results: { name: string; type: string; mode: string; status: string }[];
  tests: { node: string; test: string; status: string; violations: number | null }[];
}

const RELATIONS = (s: string) =>
  [
    `${s}.inc_append:BASE TABLE`,
    `${s}.inc_delete:BASE TABLE`,
    `${s}.inc_merge:BASE TABLE`,
    `${s}.stg_events:VIEW`,
    `${s}.stg_items:VIEW`,
    `${s}_marts.done_items:BASE TABLE`,
    `${s}_marts.hook_log:BASE TABLE`,
    `${s}_marts.summary_of_items:BASE TABLE`,
    `${s}_raw.raw_events:BASE TABLE`,
    `${s}_raw.raw_items:BASE TABLE`,
    `${s}_raw.raw_semicolon:BASE TABLE`,
    `${s}_snapshots.events_check:BASE TABLE`,
    `${s}_snapshots.events_ts:BASE TABLE`,
  ].sort();

async function checkFirstRun(r: Awaited<ReturnType<typeof build>>, schema: string, q: Query): Promise<void> {
  assert.equal(r.code, 0, r.err);
  const p = JSON.parse(r.out) as Payload;
  // 9 tests: 2 source, 3 on stg_items/done_items columns, 1 model-level, 1 accepted_values from a var, 1 not_null with where, 1 singular
  assert.equal(p.results.filter((x) => x.type === 'test').length, 9);
  assert.deepEqual(
    p.tests.filter((t) => t.status !== 'pass').map((t) => `${t.test} on ${t.node}:${t.status}:${t.violations}`),
    [`is_positive_stg_items_amount on ${schema}.stg_items:warn:1`, `is_positive_done_items_amount on ${schema}_marts.done_items:warn:1`],
  );
  assert.ok(!p.results.some((x) => x.name.includes('disabled_model') || x.name.includes('int_done')), 'ephemeral and disabled models are no nodes');
  const rels = await q(`select table_schema || '.' || table_name || ':' || table_type as t from information_schema.tables where table_schema like '${schema}%' order by 1`);
  assert.deepEqual(rels.map((x) => x.t), RELATIONS(schema));
  assert.deepEqual(await q(`select id, code, label, amount_x2, scoped, target_name from ${schema}.stg_items where id = 1`), [{ id: '1', code: '007', label: 'NEW', amount_x2: '20', scoped: '7', target_name: r.err.includes("target 'dev'") ? 'dev' : 'pg' }]);
  assert.deepEqual(await q(`select id, one from ${schema}_marts.done_items order by id`), [{ id: '2', one: '1' }, { id: '3', one: '1' }]);
  assert.deepEqual((await q(`select column_name from information_schema.columns where table_schema = '${schema}_raw' and table_name = 'raw_semicolon' order by 1`)).map((c) => c.column_name), ['id', 'label']);
  assert.deepEqual(await q(`select status, n from ${schema}_marts.summary_of_items order by 1`), [{ status: 'done', n: '2' }, { status: 'new', n: '2' }]);
}

async function checkSecondRun(r: Awaited<ReturnType<typeof build>>, schema: string, q: Query): Promise<void> {
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(await q(`select id, kind from ${schema}.inc_append order by id`), [{ id: '1', kind: 'a' }, { id: '2', kind: 'b' }, { id: '3', kind: 'c' }, { id: '4', kind: 'd' }]);
  assert.deepEqual(await q(`select id, kind, note from ${schema}.inc_merge order by id`), ['a', 'b', 'c2', 'd'].map((k, i) => ({ id: String(i + 1), kind: k, note: 'late' })));
  assert.deepEqual(await q(`select id, kind from ${schema}.inc_delete order by id`), [{ id: '1', kind: 'a' }, { id: '2', kind: 'b' }, { id: '3', kind: 'c2' }, { id: '4', kind: 'd' }]);
  // Snapshots: id 3 changed (timestamp moved / kind differs): its old version is closed, a new current one added; id 4 is new.
  const history = ['1:a:true', '2:b:true', '3:c:false', '3:c2:true', '4:d:true'];
  for (const snap of ['events_ts', 'events_check']) {
    const rows = await q(`select id, kind, case when dbt_valid_to is null then 'true' else 'false' end as cur, length(dbt_scd_id) as l from ${schema}_snapshots.${snap} order by id, dbt_valid_from`);
    assert.deepEqual(rows.map((x) => `${x.id}:${x.kind}:${x.cur}`), history, snap);
    assert.ok(rows.every((x) => x.l === '32'), 'dbt_scd_id is an md5');
  }
  assert.deepEqual(await q(`select count(*) as n from ${schema}_snapshots.events_ts a join ${schema}_snapshots.events_ts b on a.id = b.id and a.dbt_valid_to = b.dbt_valid_from`), [{ n: '1' }]);
}

describe('dbt features on DuckDB', () => {
  const duck = duckWarehouse();
  test('first run, then an incremental run after the seed changed', async () => {
    const dir = features();
    const env = { FEATURES_DUCKDB: join(dir, 'wh.duckdb') };
    const q: Query = (sql) => duck.query(dir, sql);
    await checkFirstRun(await withEnv(env, () => build('run', dir, '--json')), 'main', q);
    assert.deepEqual(await q("select comment from duckdb_tables() where table_name = 'summary_of_items'"), [{ comment: 'Items per status' }]);
    assert.deepEqual(await q("select data_type from information_schema.columns where table_name = 'raw_items' and column_name = 'code'"), [{ data_type: 'VARCHAR' }]);
    writeFileSync(join(dir, 'seeds', 'raw_events.csv'), EVENTS_2);
    await checkSecondRun(await withEnv(env, () => build('run', dir, '--json')), 'main', q);
  });
});

describe('dbt features on PostgreSQL', () => {
  let db: TempDatabase | undefined;
  let client: pg.Client | undefined;
  before(async () => {
    if (!(await pgAvailable())) return;
    db = await createTempDatabase('dbt_features');
    client = new pg.Client({ connectionString: db.url, types: { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await db?.drop();
  });
  test('first run, then an incremental run after the seed changed', async (t) => {
    if (!(await requirePg(t))) return;
    const dir = features();
    const q: Query = async (sql) => (await client!.query(sql)).rows;
    const env = { FEATURES_PG_DB: db!.name };
    await checkFirstRun(await withEnv(env, () => build('run', dir, '--target', 'pg', '--threads', '2', '--json')), 'analytics', q);
    assert.deepEqual(await q("select obj_description('analytics_marts.summary_of_items'::regclass) as c"), [{ c: 'Items per status' }]);
    writeFileSync(join(dir, 'seeds', 'raw_events.csv'), EVENTS_2);
    await checkSecondRun(await withEnv(env, () => build('run', dir, '--target', 'pg', '--threads', '2', '--json')), 'analytics', q);
  });
});
