/**
 * dbt execution fixes: `--full-refresh` after a normal run on the jaffle
 * shop layout (views downstream of seeds), tests on an ephemeral model run
 * on its inlined SQL, two seeds whose long names share a prefix loading at
 * the same time (distinct temp tables), and `+enabled` in dbt_project.yml —
 * false or through var() — leaves the node out.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { build, project, tempDir, withEnv } from './helpers/build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';

const PROFILE = (db: string) =>
  `p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n    pg:\n      type: postgres\n      host: 127.0.0.1\n      port: 5432\n      user: postgres\n      password: ""\n      dbname: ${db}\n      schema: analytics\n      threads: 4\n`;

interface Payload {
  results: { name: string; type: string; mode: string; status: string; error: string }[];
  tests?: { node: string; test: string; status: string; violations: number | null }[];
}

function dbt(files: Readonly<Record<string, string>>, projectYml = '', db = 'unused'): string {
  return project({ 'dbt_project.yml': `name: p\nprofile: p\n${projectYml}`, 'profiles.yml': PROFILE(db), ...files });
}

const run = async (dir: string, ...args: string[]) => {
  const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json', ...args));
  return { ...r, payload: r.out.startsWith('{') ? (JSON.parse(r.out) as Payload) : undefined };
};

describe('dbt execution fixes on PostgreSQL', () => {
  let db: TempDatabase | undefined;
  before(async () => {
    if (await pgAvailable()) db = await createTempDatabase('dbt_exec_fix');
  });
  after(async () => {
    await db?.drop();
  });

  test('jaffle shop: run, then run --full-refresh, then run again: every node passes, views stay views', async (t) => {
    if (!(await requirePg(t))) return;
    const dir = tempDir('dbt-jaffle-fr-');
    cpSync(join(import.meta.dirname, 'fixtures', 'dbt-jaffle'), dir, { recursive: true, filter: (src) => !src.endsWith('.duckdb') });
    const profiles = join(dir, 'profiles.yml');
    writeFileSync(profiles, readFileSync(profiles, 'utf8').replace('target: dev', 'target: pg'));
    for (const flags of [[], ['--full-refresh'], []]) {
      const r = await withEnv({ JAFFLE_PG_DB: db!.name, DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json', ...flags));
      assert.equal(r.code, 0, `${flags.join(' ')}: ${r.err}`);
      const p = JSON.parse(r.out) as Payload;
      assert.ok(p.results.every((x) => x.status === 'success'), r.out);
      // dbt's --full-refresh rebuilds tables; a view is still created as a view.
      assert.equal(p.results.find((x) => x.name === 'analytics.stg_customers')?.mode, 'view');
    }
    const c = new pg.Client({ connectionString: db!.url });
    c.on('error', () => {});
    await c.connect();
    try {
      const kinds = await c.query("select table_name || ':' || table_type as k from information_schema.tables where table_schema = 'analytics' and table_name like 'stg_%' order by 1");
      assert.deepEqual(kinds.rows.map((x: { k: string }) => x.k), ['stg_customers:VIEW', 'stg_orders:VIEW', 'stg_payments:VIEW']);
    } finally {
      await c.end();
    }
  });

  test('two seeds with long names sharing a 50-character prefix load at the same time into distinct temp tables', async (t) => {
    if (!(await requirePg(t))) return;
    const prefix = 'raw_'.padEnd(50, 'x');
    const csv = 'id,v\n1,a\n2,b\n';
    const dir = dbt({ [`seeds/${prefix}_customers.csv`]: csv, [`seeds/${prefix}_orders.csv`]: csv, [`seeds/${prefix}_payments.csv`]: csv }, '', db!.name);
    for (let i = 0; i < 2; i++) {
      const r = await run(dir, '--target', 'pg', '--threads', '3');
      assert.equal(r.code, 0, r.err);
      assert.equal(r.payload!.results.filter((x) => x.status === 'success').length, 3);
    }
  });
});

describe('dbt execution fixes on DuckDB', () => {
  test('tests on an ephemeral model run on its inlined SQL: passes pass, a failure fails with its count', async () => {
    const files = {
      'seeds/raw.csv': 'id,kind\n1,a\n2,b\n2,c\n',
      'models/eph.sql': "{{ config(materialized='ephemeral') }}\nselect id, kind from {{ ref('raw') }} where kind <> 'c'\n",
      'models/eph2.sql': "{{ config(materialized='ephemeral') }}\nselect * from {{ ref('eph') }}\n",
      'models/final.sql': "{{ config(materialized='table') }}\nselect * from {{ ref('eph2') }}\n",
      'models/schema.yml':
        'version: 2\nmodels:\n  - name: eph2\n    columns:\n      - name: id\n        tests: [unique, not_null]\n      - name: kind\n        tests:\n          - accepted_values:\n              values: [a]\n',
      'tests/eph_singular.sql': "select * from {{ ref('eph') }} where id > 5\n",
    };
    const dir = dbt(files);
    const r = await run(dir);
    assert.equal(r.code, 1, r.err);
    const status = new Map(r.payload!.results.map((x) => [x.name, x.status]));
    assert.equal(status.get('unique_eph2_id'), 'success');
    assert.equal(status.get('not_null_eph2_id'), 'success');
    assert.equal(status.get('eph_singular'), 'success');
    assert.equal(status.get('accepted_values_eph2_kind__a'), 'error');
    assert.equal(r.payload!.tests!.find((x) => x.test === 'accepted_values_eph2_kind__a')?.violations, 1);
    assert.equal(status.get('main.final'), 'success');
  });

  test('+enabled false, directly or through var(), leaves seeds and models out; --vars turns them on', async () => {
    const yml = "vars:\n  load_source_data: false\nseeds:\n  p:\n    +enabled: \"{{ var('load_source_data', false) }}\"\nmodels:\n  p:\n    off:\n      +enabled: false\n";
    const files = {
      'seeds/raw_a.csv': 'id\n1\n',
      'seeds/raw_b.csv': 'id\n2\n',
      'models/kept.sql': 'select 1 as id\n',
      'models/off/gone.sql': 'select 1 as id\n',
    };
    const dir = dbt(files, yml);
    const r = await run(dir);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.payload!.results.map((x) => x.name).sort(), ['main.kept']);
    const on = await run(dir, '--vars', '{load_source_data: true}');
    assert.equal(on.code, 0, on.err);
    assert.deepEqual(on.payload!.results.map((x) => x.name).sort(), ['main.kept', 'main.raw_a', 'main.raw_b']);
  });

  test('a Jinja config in dbt_project.yml that fails names the file and the key', async () => {
    const dir = dbt({ 'models/a.sql': 'select 1 as id\n' }, "models:\n  p:\n    +schema: \"{{ var('nowhere') }}\"\n");
    const r = await run(dir);
    assert.equal(r.code, 1);
    assert.match(r.err, /dbt_project\.yml: models\.p\.\+schema: .*var\('nowhere'\) is not defined/);
  });
});
