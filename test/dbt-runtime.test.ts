/**
 * dbt's runtime as packages see it, on PostgreSQL and DuckDB: the `dbt`
 * namespace of built-in cross-database macros (our own Jinja), dispatch
 * with the project's `dispatch:` search order, package scopes (a package's
 * `default__date_spine` does not replace dbt's), packages found where
 * `dbt deps` installs them (a git package under its own `name:`, a `local:`
 * package at its path), api.Relation / api.Column, Relation and Column
 * objects, load_relation, and run_query results shaped like agate tables.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { build, tempDir, withEnv, writeFiles } from './helpers/build-cli.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { duckWarehouse } from './helpers/warehouse.js';
import { duckdbActor } from '../actors/duckdb-actor.js';

const PACKAGE_FILES: Record<string, string> = {
  // A git package lives under its own name (acme_tools), not the repository's (dbt-acme-tools).
  'project/dbt_packages/acme_tools/dbt_project.yml': 'name: acme_tools\nversion: "1.0"\nconfig-version: 2\n',
  'project/dbt_packages/acme_tools/macros/greet.sql': [
    "{% macro greet(x) %}{{ return(adapter.dispatch('greet', 'acme_tools')(x)) }}{% endmacro %}",
    "{% macro default__greet(x) %}('pkg ' || {{ x }}){% endmacro %}",
    "{% macro shout(x) %}{{ return(adapter.dispatch('shout', 'acme_tools')(x)) }}{% endmacro %}",
    '{% macro default__shout(x) %}upper({{ x }}){% endmacro %}',
    // Same name as dbt's own: dbt.date_spine must still use dbt's.
    "{% macro default__date_spine(datepart, start_date, end_date) %}select 'acme' as date_day{% endmacro %}",
  ].join('\n'),
  'shared_pkg/dbt_project.yml': 'name: shared_pkg\nversion: "1.0"\nconfig-version: 2\n',
  'shared_pkg/macros/twice.sql': '{% macro twice(x) %}({{ x }} * 2){% endmacro %}',
};

const PROJECT_FILES: Record<string, string> = {
  'project/dbt_project.yml': [
    'name: rt',
    'profile: rt',
    'config-version: 2',
    'models:',
    '  rt:',
    '    +materialized: table',
    'dispatch:',
    '  - macro_namespace: acme_tools',
    "    search_order: ['rt', 'acme_tools']",
    '',
  ].join('\n'),
  'project/packages.yml': 'packages:\n  - git: "https://github.com/acme/dbt-acme-tools.git"\n    revision: v1\n  - local: ../shared_pkg\n',
  'project/macros/overrides.sql': "{% macro default__greet(x) %}('project ' || {{ x }}){% endmacro %}",
  'project/models/sources.yml': 'version: 2\nsources:\n  - name: raw\n    schema: raw_src\n    tables:\n      - name: people\n',
  'project/models/builtins.sql': `select
  cast({{ dbt.dateadd('day', 3, "cast('2024-01-30' as date)") }} as date) as plus3,
  cast({{ dbt.dateadd('month', 1, "cast('2024-01-31' as date)") }} as date) as plus_month,
  cast({{ dbt.datediff("cast('2024-01-01' as date)", "cast('2024-03-15' as date)", 'day') }} as integer) as diff_days,
  cast({{ dbt.datediff("cast('2024-01-31' as date)", "cast('2024-03-01' as date)", 'month') }} as integer) as diff_months,
  cast({{ dbt.date_trunc('month', "cast('2024-02-17' as date)") }} as date) as trunc_month,
  {{ dbt.last_day("cast('2024-02-17' as date)", 'month') }} as last_feb,
  {{ dbt.last_day("cast('2024-05-17' as date)", 'quarter') }} as last_q2,
  {{ dbt.safe_cast("'42'", dbt.type_int()) }} as n42,
  {{ dbt.concat(["'a'", "'b'", "'c'"]) }} as abc,
  {{ dbt.hash("'x'") }} as md5x,
  {{ dbt.length("'hello'") }} as len5,
  {{ dbt.position("'l'", "'hello'") }} as pos3,
  {{ dbt.replace("'hello'", "'l'", "'L'") }} as replaced,
  {{ dbt.right("'hello'", 2) }} as right2,
  {{ dbt.split_part("'a,b,c'", "','", 2) }} as part2,
  {{ dbt.split_part("'a,b,c'", "','", -1) }} as last_part,
  {{ dbt.string_literal(dbt.escape_single_quotes("it's")) }} as quoted,
  {{ dbt.cast_bool_to_text('1 = 1') }} as bool_text,
  {{ dbt.current_timestamp() }} is not null as has_now,
  {{ string_literal(type_string()) }} as t_string,
  '{{ dbt.type_numeric() }}' as t_numeric,
  {{ acme_tools.greet("'x'") }} as greeted,
  {{ acme_tools.shout("'x'") }} as shouted,
  {{ shared_pkg.twice(21) }} as forty_two
`,
  'project/models/aggregates.sql': `with v as (select 1 as k, 'b' as s, true as b union all select 1, 'a', false union all select 1, 'c', false)
select {{ dbt.listagg('s', "','", 'order by s') }} as joined, {{ dbt.bool_or('b') }} as any_true, {{ dbt.any_value('k') }} as k,
  (select count(*) from (select 1 as x union all select 2 {{ dbt.except() }} select 2) q) as after_except,
  (select count(*) from (select 1 as x {{ dbt.intersect() }} select 1) q) as after_intersect
from v`,
  'project/models/spine.sql': `{{ dbt.date_spine('day', "cast('2024-01-01' as date)", "cast('2024-01-05' as date)") }}`,
  'project/models/introspect.sql': `{% set rel = source('raw', 'people') %}
{% set cols = adapter.get_columns_in_relation(rel) %}
{% set t = run_query("select 1 as n union all select 2 as n order by 1") %}
select
{% for c in cols %}  '{{ c.name }}:{{ c.is_string() }}:{{ c.is_number() }}:{{ c.data_type }}' as col_{{ loop.index }},
{% endfor %}  '{{ load_relation(rel).is_table }}' as loaded_is_table,
  '{{ load_relation(api.Relation.create(schema=rel.schema, identifier='nope')) is none }}' as missing_is_none,
  '{{ api.Relation.create(schema='s', identifier='T') | replace("'", "") }}' as rendered,
  '{{ rel.include(schema=false) }}' as without_schema,
  '{{ rel is mapping and rel.get('metadata', {}).get('type', '').endswith('Relation') }}' as is_relation,
  {{ t.columns['n'].values() | sum }} as total,
  {{ t.rows | length }} as nrows,
  '{{ t.column_names | join(',') }}' as names,
  '{{ api.Column.translate_type('string') }}' as translated`,
};

function runtimeProject(profile: string): string {
  const root = tempDir('dbt-runtime-');
  writeFiles(root, { ...PACKAGE_FILES, ...PROJECT_FILES, 'project/profiles.yml': profile });
  mkdirSync(join(root, 'project', 'target'), { recursive: true });
  return join(root, 'project');
}

type Row = Record<string, unknown>;

/** A boolean as either warehouse's reader returns it (PostgreSQL text: 't'). */
const bool = (v: unknown) => (v === 't' || v === true || v === 'true' ? 'true' : String(v));

function checkCommon(b: Row, a: Row, spine: Row[]): void {
  assert.deepEqual(
    [b.plus3, b.plus_month, b.diff_days, b.diff_months, b.trunc_month, b.last_feb, b.last_q2].map(String),
    ['2024-02-02', '2024-02-29', '74', '2', '2024-02-01', '2024-02-29', '2024-06-30'],
  );
  assert.deepEqual(
    [b.n42, b.abc, b.md5x, b.len5, b.pos3, b.replaced, b.right2, b.part2, b.last_part, b.quoted, b.bool_text, bool(b.has_now)].map(String),
    ['42', 'abc', '9dd4e461268c8034f5c8564e155c67a6', '5', '3', 'heLLo', 'lo', 'b', 'c', "it's", 'true', 'true'],
  );
  assert.equal(b.t_string, 'TEXT');
  assert.equal(b.t_numeric, 'numeric(28,6)');
  assert.equal(b.greeted, 'project x', "the project's default__greet wins: dispatch search_order ['rt', 'acme_tools']");
  assert.equal(b.shouted, 'X', "the package's own default__shout when the project has none");
  assert.equal(String(b.forty_two), '42', 'a local: package read from its path');
  assert.deepEqual([a.joined, bool(a.any_true), String(a.k), String(a.after_except), String(a.after_intersect)], ['a,b,c', 'true', '1', '1', '1']);
  assert.deepEqual(
    spine.map((r) => String(r.date_day).slice(0, 10)),
    ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'],
    "dbt.date_spine is dbt's, not the package's default__date_spine; the end date is excluded",
  );
}

function checkIntrospect(i: Row, types: string[]): void {
  assert.deepEqual([i.col_1, i.col_2, i.col_3], types);
  assert.deepEqual(
    [i.loaded_is_table, i.missing_is_none, i.rendered, i.without_schema, i.is_relation, String(i.total), String(i.nrows), i.names, i.translated],
    ['True', 'True', 's."T"', 'people', 'True', '3', '2', 'n', 'TEXT'],
  );
}

describe('dbt runtime on PostgreSQL', () => {
  let db: TempDatabase | undefined;
  let client: pg.Client | undefined;
  before(async () => {
    if (!(await pgAvailable())) return;
    db = await createTempDatabase('dbt_runtime');
    client = new pg.Client({ connectionString: db.url, types: { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig });
    client.on('error', () => {});
    await client.connect();
    await client.query('create schema raw_src; create table raw_src.people (id integer, name varchar(20), score numeric(5,2))');
  });
  after(async () => {
    await client?.end();
    await db?.drop();
  });
  test('built-in macros, dispatch, packages, Relation and Column', async (t) => {
    if (!(await requirePg(t))) return;
    const dir = runtimeProject(`rt:\n  target: pg\n  outputs:\n    pg:\n      type: postgres\n      host: 127.0.0.1\n      user: postgres\n      port: "{{ env_var('RT_PORT') | as_number }}"\n      dbname: ${db!.name}\n      schema: rt\n`);
    const r = await withEnv({ RT_PORT: '5432' }, () => build('run', dir, '--json', '--threads', '2'));
    assert.equal(r.code, 0, r.err);
    const one = async (sql: string) => (await client!.query(sql)).rows as Row[];
    const [b] = await one('select * from rt.builtins');
    const [a] = await one('select * from rt.aggregates');
    checkCommon(b!, a!, await one('select date_day from rt.spine order by 1'));
    const [i] = await one('select * from rt.introspect');
    checkIntrospect(i!, ['id:False:True:integer', 'name:True:False:character varying(20)', 'score:False:True:numeric(5,2)']);
  });
});

describe('dbt runtime on DuckDB', () => {
  const duck = duckWarehouse();
  test('built-in macros, dispatch, packages, Relation and Column', async () => {
    const dir = runtimeProject('rt:\n  target: duck\n  outputs:\n    duck:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n');
    await duck.query(dir, 'create schema raw_src; create table raw_src.people (id integer, name varchar(20), score decimal(5,2))');
    // The compile-time query process must lock the file: the test's own reader lets go first, and the build runs as its own process.
    await duckdbActor(join(dir, 'wh.duckdb')).close();
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'bin', 'service.js'), 'build', 'run', dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const [b] = await duck.query(dir, 'select * from main.builtins');
    const [a] = await duck.query(dir, 'select * from main.aggregates');
    checkCommon(b!, a!, await duck.query(dir, 'select date_day from main.spine order by 1'));
    const [i] = await duck.query(dir, 'select * from main.introspect');
    checkIntrospect(i!, ['id:False:True:INTEGER', 'name:True:False:VARCHAR', 'score:False:True:DECIMAL(5,2)']);
  });
});

describe('dbt packages as dbt deps installs them', () => {
  const profile = 'p:\n  target: d\n  outputs:\n    d:\n      type: duckdb\n      path: wh.duckdb\n';
  const dbtProject = (files: Record<string, string>) => {
    const root = tempDir('dbt-pkgs-');
    writeFiles(root, { 'p/dbt_project.yml': 'name: p\nprofile: p\n', 'p/profiles.yml': profile, 'p/models/m.sql': 'select 1 as x', ...files });
    return join(root, 'p');
  };
  test('a hub package that is not installed names the package and says to run dbt deps', async () => {
    const r = await build('list', dbtProject({ 'p/packages.yml': 'packages:\n  - package: dbt-labs/dbt_utils\n    version: 1.3.0\n' }));
    assert.equal(r.code, 1);
    assert.match(r.err, /packages\.yml: package 'dbt-labs\/dbt_utils' is not installed under dbt_packages\/ \(looked for a package named 'dbt_utils'\); run `dbt deps` to install it/);
  });
  test('a local package whose path has no dbt_project.yml is an error naming the path', async () => {
    const r = await build('list', dbtProject({ 'p/dependencies.yml': 'packages:\n  - local: ../missing\n' }));
    assert.equal(r.code, 1);
    assert.match(r.err, /dependencies\.yml: local package '\.\.\/missing' not found: .*missing has no dbt_project\.yml/);
  });
  test("a package's own packages resolve beside it, and the name in package-lock.yml is used", async () => {
    const dir = dbtProject({
      'p/packages.yml': 'packages:\n  - git: "https://example.com/x/some-repo.git"\n',
      'p/package-lock.yml': 'packages:\n  - git: "https://example.com/x/some-repo.git"\n    name: tools\n',
      'p/dbt_packages/tools/dbt_project.yml': 'name: tools\n',
      'p/dbt_packages/tools/packages.yml': 'packages:\n  - package: acme/helpers\n',
      'p/dbt_packages/helpers/dbt_project.yml': 'name: helpers\n',
      'p/dbt_packages/helpers/macros/h.sql': '{% macro h() %}7{% endmacro %}',
      'p/models/m.sql': 'select {{ helpers.h() }} as x',
    });
    const r = await build('list', dir);
    assert.equal(r.code, 0, r.err);
  });
});
