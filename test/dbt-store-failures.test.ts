/**
 * dbt's test configs `store_failures` / `store_failures_as` and `limit`: a
 * failing test keeps its failing rows in `<schema>_dbt_test__audit.<test>`
 * (replaced by each run), a `view` keeps them as a view, `limit` caps what
 * is counted and stored; a long test name is cut and hashed as dbt does.
 * On DuckDB and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { build, project, withEnv } from './helpers/build-cli.js';
import { duckSql } from './helpers/duck-file.js';
import { join } from 'node:path';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const PROFILE = (db: string) =>
  `p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n    pg:\n      type: postgres\n      host: 127.0.0.1\n      port: 5432\n      user: postgres\n      password: ""\n      dbname: ${db}\n      schema: analytics\n      threads: 2\n`;

const LONG = 'a_model_whose_name_is_long_enough_that_its_tests_need_a_hashed_name';

const FILES = {
  'models/orders.sql': "select 1 as id, 'x' as status union all select 2, 'y' union all select 3, null union all select 4, null",
  [`models/${LONG}.sql`]: 'select null::integer as id',
  'models/schema.yml': [
    'version: 2',
    'models:',
    '  - name: orders',
    '    columns:',
    '      - name: status',
    '        tests:',
    '          - not_null:',
    '              config: {store_failures: true, severity: warn}',
    "          - accepted_values:",
    "              values: ['x']",
    '              config: {store_failures_as: view, severity: warn}',
    '      - name: id',
    '        tests:',
    '          - not_null:',
    '              config: {limit: 1}',
    `  - name: ${LONG}`,
    '    columns:',
    '      - name: id',
    '        tests:',
    '          - not_null:',
    '              config: {store_failures: true, severity: warn, limit: 1}',
    '',
  ].join('\n'),
};

interface Payload {
  tests: { node: string; test: string; status: string; violations: number | null }[];
}

async function runTwice(dir: string, target: string[]): Promise<Payload> {
  let payload: Payload | undefined;
  // The second run replaces what the first stored.
  for (let i = 0; i < 2; i++) {
    const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json', ...target));
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /store_failures|'limit'/, 'no warning: both configs take effect');
    payload = JSON.parse(r.out) as Payload;
  }
  return payload!;
}

function checkCounts(p: Payload): void {
  const v = (name: string) => p.tests.find((t) => t.test === name)?.violations;
  assert.equal(v('not_null_orders_status'), 2);
  assert.equal(v('accepted_values_orders_status__x'), 1, 'a null is not a rejected value');
  // limit 1 caps the count: the model has no null id, so 0 either way; the long one has 1 row.
  assert.equal(v('not_null_orders_id'), 0);
  assert.equal(v(`not_null_${LONG}_id`), 1);
}

const AUDIT_HASHED = /^not_null_a_model_whose_name_is_[0-9a-f]{32}$/;

describe('store_failures and limit', () => {
  test('DuckDB: failing rows stored in main_dbt_test__audit, a view when store_failures_as is view', async () => {
    const dir = project({ 'dbt_project.yml': 'name: p\nprofile: p\n', 'profiles.yml': PROFILE('unused'), ...FILES });
    checkCounts(await runTwice(dir, []));
    const rels = await duckSql<Record<string, unknown>[]>(join(dir, 'wh.duckdb'), "select table_name, table_type from information_schema.tables where table_schema = 'main_dbt_test__audit' order by 1", 'objects-json');
    assert.equal(rels.length, 3, JSON.stringify(rels));
    assert.deepEqual(rels[0], { table_name: 'accepted_values_orders_status__x', table_type: 'VIEW' });
    assert.match(String(rels[1]!.table_name), AUDIT_HASHED);
    assert.deepEqual(rels[2], { table_name: 'not_null_orders_status', table_type: 'BASE TABLE' });
    const stored = await duckSql<Record<string, unknown>[]>(join(dir, 'wh.duckdb'), 'select count(*)::int as n from main_dbt_test__audit.not_null_orders_status', 'objects-json');
    assert.deepEqual(stored, [{ n: 2 }]);
  });

  test('PostgreSQL: the same, in analytics_dbt_test__audit', async (t) => {
    if (!(await requirePg(t))) return;
    const db = await createTempDatabase('dbt_store_failures');
    try {
      const dir = project({ 'dbt_project.yml': 'name: p\nprofile: p\n', 'profiles.yml': PROFILE(db.name), ...FILES });
      checkCounts(await runTwice(dir, ['--target', 'pg']));
      const c = new pg.Client({ connectionString: db.url });
      c.on('error', () => {});
      await c.connect();
      try {
        const rels = await c.query("select table_name, table_type from information_schema.tables where table_schema = 'analytics_dbt_test__audit' order by 1");
        assert.equal(rels.rows.length, 3, JSON.stringify(rels.rows));
        assert.equal(rels.rows[0].table_type, 'VIEW');
        assert.match(rels.rows[1].table_name, AUDIT_HASHED);
        const n = await c.query(`select count(*)::int as n from analytics_dbt_test__audit."${rels.rows[1].table_name}"`);
        assert.equal(n.rows[0].n, 1);
      } finally {
        await c.end();
      }
    } finally {
      await db.drop();
    }
  });
});
