/**
 * Parse, then compile each node when it is ready: a dbt model whose
 * template asks the database (adapter.get_columns_in_relation, run_query)
 * renders at load with `execute` false and again, with `execute` true, on
 * the thread that runs it — after its parents are built, in a fresh
 * database — so it sees their real columns and rows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { build, project, withEnv } from './helpers/build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { duckWarehouse } from './helpers/warehouse.js';

const profile = (db: string) =>
  `p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n    pg:\n      type: postgres\n      host: 127.0.0.1\n      port: 5432\n      user: postgres\n      password: ""\n      dbname: ${db}\n      schema: live\n      threads: 2\n`;

const FILES = {
  'dbt_project.yml': 'name: live\nprofile: p\nmodels:\n  live:\n    +materialized: table\n',
  // dbt_utils.star's shape: `*` while parsing, the relation's columns when it runs.
  'macros/prefixed_star.sql':
    "{% macro prefixed_star(rel, prefix) -%}\n  {%- if not execute -%}*{%- else -%}\n  {%- set cols = adapter.get_columns_in_relation(rel) -%}\n  {%- for c in cols %}{{ c.column }} as {{ prefix }}{{ c.column }}{% if not loop.last %}, {% endif %}{% endfor -%}\n  {%- endif -%}\n{%- endmacro %}\n",
  'models/a.sql': "select 1 as id, 'x' as name, 2.5 as amount\n",
  'models/b.sql': "select {{ prefixed_star(ref('a'), 'a_') }} from {{ ref('a') }}\n",
  'models/c.sql': "{% set r = run_query('select count(*) as n from ' ~ ref('b')) %}\nselect {{ r.columns[0].values()[0] if execute else 0 }} as rows_in_b\n",
  'models/d.sql': 'select * from {{ ref("c") }}\n',
  // Empty at parse, as dbt_utils.union_relations is: the whole query comes from the run-time render.
  'macros/select_all_of.sql':
    "{% macro select_all_of(rel) %}{% if execute %}{% set cols = adapter.get_columns_in_relation(rel) %}select {% for c in cols %}{{ c.column }}{% if not loop.last %}, {% endif %}{% endfor %} from {{ rel }}{% endif %}{% endmacro %}\n",
  'models/f.sql': "{{ select_all_of(ref('b')) }}\n",
  // Numbers come back as numbers, as in dbt's agate tables (PostgreSQL sends count(*)'s int8 as text).
  'models/g.sql': "{% set n = run_query('select count(*) as n from ' ~ ref('a')).columns[0].values()[0] if execute else 0 %}\nselect {{ n + 1 }} as n_plus_one\n",
  // A generic test and a singular test that ask the database: rendered when they run, after the models they read.
  'macros/same_count.sql':
    "{% test same_count(model, other) %}\n{% set n = run_query('select count(*) from ' ~ other).columns[0].values()[0] if execute else 0 %}\nselect 1 as x from {{ model }} having count(*) <> {{ n }}\n{% endtest %}\n",
  'models/schema.yml': "version: 2\nmodels:\n  - name: b\n    tests:\n      - same_count:\n          other: ref('a')\n",
  'tests/b_has_a_columns.sql':
    "{% set cols = adapter.get_columns_in_relation(ref('b')) if execute else [] %}\nselect 1 as x where {{ cols | length }} <> 3\n",
};

interface Payload {
  results: { name: string; status: string; error: string }[];
}

async function runLive(dir: string, ...args: string[]): Promise<Payload> {
  const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json', ...args));
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as Payload;
}

function liveArtifacts(dir: string): void {
  assert.match(readFileSync(join(dir, 'target/compiled/live/models/b.sql'), 'utf8'), /select id as a_id, name as a_name, amount as a_amount from/);
  const rr = JSON.parse(readFileSync(join(dir, 'target/run_results.json'), 'utf8')) as { results: { unique_id: string; compiled_code: string }[] };
  assert.match(rr.results.find((x) => x.unique_id === 'model.live.c')!.compiled_code, /select 1 as rows_in_b/);
}

describe('dbt models compiled when their parents exist', () => {
  test('DuckDB: a model introspecting a parent built in the same run gets its columns; run_query sees its rows', async () => {
    const dir = project({ ...FILES, 'profiles.yml': profile('unused') });
    const p = await runLive(dir);
    assert.ok(p.results.every((x) => x.status === 'success'), JSON.stringify(p.results));
    assert.deepEqual(p.results.filter((x) => !x.name.startsWith('main.')).map((x) => x.name).sort(), ['b_has_a_columns', 'same_count_b__ref_a_']);
    const duck = duckWarehouse();
    const cols = await duck.query(dir, "select column_name from information_schema.columns where table_name = 'b' order by ordinal_position");
    assert.deepEqual(cols.map((c) => c.column_name), ['a_id', 'a_name', 'a_amount']);
    assert.deepEqual(await duck.query(dir, 'select rows_in_b from main.d'), [{ rows_in_b: '1' }]);
    assert.deepEqual(await duck.query(dir, 'select * from main.f'), [{ a_id: '1', a_name: 'x', a_amount: '2.5' }]);
    assert.deepEqual(await duck.query(dir, 'select n_plus_one from main.g'), [{ n_plus_one: '2' }]);
    liveArtifacts(dir);
  });

  test('a failing query at run time fails that model (naming its file) and skips its dependents only', async () => {
    const dir = project({ ...FILES, 'profiles.yml': profile('unused'), 'models/e.sql': "{% set r = run_query('select * from no_such_table_here') %}\nselect 1 as x\n" });
    const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json'));
    assert.equal(r.code, 1);
    const p = JSON.parse(r.out) as Payload;
    const e = p.results.find((x) => x.name === 'main.e')!;
    assert.equal(e.status, 'error');
    assert.match(e.error, /could not compile model 'e'.*models\/e\.sql: compile-time query failed: .*no_such_table_here/);
    assert.equal(p.results.find((x) => x.name === 'main.d')?.status, 'success');
  });

  test('a model that raises only when execute is true loads (dbt parses it) and fails alone when it runs', async () => {
    const files = {
      ...FILES,
      'profiles.yml': profile('unused'),
      'macros/only_elsewhere.sql': "{% macro only_elsewhere() %}{% if execute %}{% do exceptions.raise_compiler_error('not on ' ~ target.type) %}{% endif %}{% endmacro %}\n",
      'models/h.sql': 'select {{ only_elsewhere() }} 1 as x\n',
      // A generic test on an ephemeral model gets a Relation (a CTE) as its model, as dbt_utils' tests check.
      'models/eph.sql': "{{ config(materialized='ephemeral') }}\nselect 1 as id\n",
      'macros/relation_only.sql': "{% test relation_only(model) %}{% if model is not mapping or model.type != 'cte' %}{% do exceptions.raise_compiler_error('not a Relation') %}{% endif %}select * from {{ model }} where id is null{% endtest %}\n",
      'models/eph.yml': 'version: 2\nmodels:\n  - name: eph\n    tests:\n      - relation_only\n',
    };
    const dir = project(files);
    const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir, '--json'));
    assert.equal(r.code, 1, r.err);
    const p = JSON.parse(r.out) as Payload;
    const h = p.results.find((x) => x.name === 'main.h')!;
    assert.equal(h.status, 'error');
    assert.match(h.error, /could not compile model 'h'.*not on duckdb/);
    assert.deepEqual(p.results.filter((x) => x.status !== 'success').map((x) => x.name), ['main.h']);
    assert.equal(p.results.find((x) => x.name.startsWith('relation_only'))?.status, 'success');
  });

  test("a log() of a model that asks the database is not printed from the load's tries on empty answers", async () => {
    const dir = project({
      ...FILES,
      'profiles.yml': profile('unused'),
      'models/k.sql': "{% set r = run_query('select * from ' ~ ref('a')) %}{% if execute %}{{ log('rows seen: ' ~ (r.rows | length), info=True) }}{% endif %}\nselect 1 as x\n",
    });
    const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir));
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /rows seen: 0/);
    assert.match(r.err, /rows seen: 1/);
  });

  describe('PostgreSQL (the pool workers)', () => {
    let db: TempDatabase | undefined;
    before(async () => {
      if (await pgAvailable()) db = await createTempDatabase('dbt_live');
    });
    after(async () => {
      await db?.drop();
    });
    test('a fresh database: B built from A’s columns, C from B’s rows', async (t) => {
      if (!(await requirePg(t))) return;
      const dir = project({ ...FILES, 'profiles.yml': profile(db!.name) });
      const p = await runLive(dir, '--target', 'pg');
      assert.ok(p.results.every((x) => x.status === 'success'), JSON.stringify(p.results));
      const c = new pg.Client({ connectionString: db!.url });
      c.on('error', () => {});
      await c.connect();
      try {
        const cols = await c.query("select column_name from information_schema.columns where table_schema = 'live' and table_name = 'b' order by ordinal_position");
        assert.deepEqual(cols.rows.map((x: { column_name: string }) => x.column_name), ['a_id', 'a_name', 'a_amount']);
        assert.equal((await c.query('select rows_in_b::int as n from live.d')).rows[0].n, 1);
        assert.equal((await c.query('select n_plus_one::int as n from live.g')).rows[0].n, 2);
      } finally {
        await c.end();
      }
      liveArtifacts(dir);
    });
  });
});
