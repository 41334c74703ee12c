/**
 * A jaffle-shop-like dbt project (test/fixtures/dbt-jaffle: seeds,
 * staging views, schema.yml tests, a macro, a singular test) runs unchanged
 * with `service build run <dir>` on DuckDB (the profile's default target)
 * and on PostgreSQL (`--target pg`): dbt's relation names and kinds, the
 * row counts, every test a node of its own with a `pass`; a failing test
 * fails the command; `build test --json` lists each test with its count.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build, tempDir, withEnv, writeFiles } from './helpers/build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { duckWarehouse, pgWarehouse } from './helpers/warehouse.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'dbt-jaffle');

function jaffle(extra: Readonly<Record<string, string>> = {}): string {
  const dir = tempDir('dbt-jaffle-');
  cpSync(FIXTURE, dir, { recursive: true, filter: (src) => !src.endsWith('.duckdb') });
  writeFiles(dir, extra);
  return dir;
}

interface Payload {
  results: { name: string; type: string; mode: string; status: string; error: string; rows: number }[];
  tests?: { node: string; test: string; status: string; violations: number | null }[];
  total: number;
  failed: number;
}

const TESTS = 17; // 16 generic tests in the two schema.yml files + 1 singular test

describe('dbt jaffle shop on DuckDB (profile default target, no flags)', () => {
  const duck = duckWarehouse();
  test('run builds dbt relation names and kinds, counts and runs every test', async () => {
    const dir = jaffle();
    const r = await withEnv({ JAFFLE_DUCKDB: join(dir, 'wh.duckdb') }, () => build('run', dir, '--json'));
    assert.equal(r.code, 0, r.err);
    const p = JSON.parse(r.out) as Payload;
    const byName = new Map(p.results.map((x) => [x.name, x]));
    assert.deepEqual(
      ['main.raw_customers', 'main.raw_orders', 'main.raw_payments', 'main.stg_customers', 'main.stg_orders', 'main.stg_payments', 'main.customers', 'main.orders'].map((n) => [n, byName.get(n)?.mode]),
      [
        ['main.raw_customers', 'full-refresh'],
        ['main.raw_orders', 'full-refresh'],
        ['main.raw_payments', 'full-refresh'],
        ['main.stg_customers', 'view'],
        ['main.stg_orders', 'view'],
        ['main.stg_payments', 'view'],
        ['main.customers', 'full-refresh'],
        ['main.orders', 'full-refresh'],
      ],
    );
    assert.equal(p.results.filter((x) => x.type === 'test').length, TESTS);
    assert.equal(p.tests?.length, TESTS);
    assert.ok(p.tests!.every((t) => t.status === 'pass'), JSON.stringify(p.tests));
    assert.equal(byName.get('main.orders')!.rows, 6);
    assert.equal(byName.get('main.customers')!.rows, 5);
    const kinds = await duck.query(dir, "select table_name, table_type from information_schema.tables where table_schema = 'main' order by 1");
    assert.deepEqual(
      kinds.map((k) => `${k.table_name}:${k.table_type}`),
      ['customers:BASE TABLE', 'orders:BASE TABLE', 'raw_customers:BASE TABLE', 'raw_orders:BASE TABLE', 'raw_payments:BASE TABLE', 'stg_customers:VIEW', 'stg_orders:VIEW', 'stg_payments:VIEW'],
    );
    // +column_types on the seed, the macro in stg_payments (cents to dollars)
    assert.deepEqual(await duck.query(dir, "select data_type from information_schema.columns where table_name = 'raw_orders' and column_name = 'order_date'"), [{ data_type: 'DATE' }]);
    assert.deepEqual(await duck.query(dir, 'select customer_lifetime_value as v from main.customers where customer_id = 1'), [{ v: '35.00' }]);
  });

  test('a failing test fails run and test; test --json lists each test with its failing-row count', async () => {
    const dir = jaffle({ 'tests/no_big_orders.sql': "select * from {{ ref('orders') }} where amount >= 10\n" });
    const env = { JAFFLE_DUCKDB: join(dir, 'wh.duckdb') };
    const r = await withEnv(env, () => build('run', dir));
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /test no_big_orders on tests\/no_big_orders\.sql \.+ FAIL \(5 violating rows\)/);
    assert.match(r.err, /Tests: 17 passed, 0 warned, 1 failed/);
    const t = await withEnv(env, () => build('test', dir, '--json'));
    assert.equal(t.code, 1, t.err);
    const entries = JSON.parse(t.out) as { name: string; type: string; status: string; failures?: number }[];
    assert.equal(entries.length, TESTS + 1);
    assert.ok(entries.every((e) => e.type === 'test' && typeof e.failures === 'number'), t.out);
    assert.deepEqual(entries.find((e) => e.name === 'no_big_orders'), { ...entries.find((e) => e.name === 'no_big_orders'), status: 'fail', failures: 5 });
    assert.equal(entries.filter((e) => e.status === 'ok').length, TESTS);
  });

  test('as dbt build: a failing test of a model skips the models that read it', async () => {
    const dir = jaffle();
    const schema = join(dir, 'models', 'staging', 'schema.yml');
    writeFileSync(schema, readFileSync(schema, 'utf8').replace('        tests: [unique, not_null]\n  - name: stg_orders', '        tests: [unique, not_null]\n      - name: first_name\n        tests:\n          - accepted_values:\n              values: [nobody]\n  - name: stg_orders'));
    const r = await withEnv({ JAFFLE_DUCKDB: join(dir, 'wh.duckdb') }, () => build('run', dir, '--json'));
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /test accepted_values_stg_customers_first_name__nobody on main\.stg_customers \.+ FAIL \(5 violating rows\)/);
    const p = JSON.parse(r.out) as Payload;
    const status = (n: string) => p.results.find((x) => x.name === n)?.status;
    assert.equal(status('accepted_values_stg_customers_first_name__nobody'), 'error');
    assert.equal(status('main.customers'), 'skipped');
    assert.equal(status('main.orders'), 'success');
    assert.equal(status('relationships_orders_customer_id__customer_id__ref_customers_'), 'skipped');
  });

  test('run on a dbt directory no longer prints help: a missing profile fails naming where it looked', async () => {
    const dir = tempDir('dbt-noprofile-');
    writeFiles(dir, { 'dbt_project.yml': 'name: p\nprofile: p\n', 'models/a.sql': 'select 1 as x\n' });
    const r = await withEnv({ DBT_PROFILES_DIR: join(dir, 'nowhere') }, () => build('run', dir));
    assert.equal(r.code, 1);
    assert.match(r.err, /no profiles\.yml found \(looked in .*nowhere\/profiles\.yml\)/);
  });
});

describe('dbt jaffle shop on PostgreSQL (a profile whose default target is postgres, from DBT_PROFILES_DIR)', () => {
  let db: TempDatabase | undefined;
  const pgWh = pgWarehouse('dbt_jaffle_q');
  before(async () => {
    if (await pgAvailable()) db = await createTempDatabase('dbt_jaffle');
    await pgWh.setup();
  });
  after(async () => {
    await pgWh.close();
    await db?.drop();
  });
  test('run twice: profile schema, views and tables as dbt makes them, every test passes', async (t) => {
    if (!(await requirePg(t))) return;
    const dir = jaffle();
    // The same profile with postgres as its default target, where dbt users keep it: outside the project.
    const profiles = tempDir('dbt-profiles-');
    writeFileSync(join(profiles, 'profiles.yml'), readFileSync(join(dir, 'profiles.yml'), 'utf8').replace('target: dev', 'target: pg'));
    for (let i = 0; i < 2; i++) {
      const r = await withEnv({ JAFFLE_PG_DB: db!.name, DBT_PROFILES_DIR: profiles }, () => build('run', dir, '--threads', '2', '--json'));
      assert.equal(r.code, 0, r.err);
      const p = JSON.parse(r.out) as Payload;
      assert.equal(p.failed, 0);
      assert.equal(p.tests?.filter((x) => x.status === 'pass').length, TESTS);
      assert.equal(p.results.find((x) => x.name === 'analytics.orders')?.rows, 6);
    }
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: db!.url });
    await c.connect();
    try {
      const kinds = await c.query("select table_name || ':' || table_type as k from information_schema.tables where table_schema = 'analytics' order by 1");
      assert.deepEqual(
        kinds.rows.map((x: { k: string }) => x.k),
        ['customers:BASE TABLE', 'orders:BASE TABLE', 'raw_customers:BASE TABLE', 'raw_orders:BASE TABLE', 'raw_payments:BASE TABLE', 'stg_customers:VIEW', 'stg_orders:VIEW', 'stg_payments:VIEW'],
      );
      assert.equal((await c.query('select count(*)::int as n from analytics.customers')).rows[0].n, 5);
    } finally {
      await c.end();
    }
  });
});
