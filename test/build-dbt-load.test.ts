/**
 * How a dbt project is found and configured — profiles.yml from
 * --profiles-dir, DBT_PROFILES_DIR or the project directory, env_var() in
 * it, --target picking the output; a project's generate_schema_name /
 * generate_alias_name overriding dbt's naming; source freshness through
 * `build test --freshness`; sling_build.yml accepted beside service_build.yml.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, duckProject, logLines, project, tempDir, withEnv, writeFiles } from './helpers/build-cli.js';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { duckdbActor } from '../actors/duckdb-actor.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';
import { duckWarehouse } from './helpers/warehouse.js';

const profile = (schema = 'main', extra = '') => `p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: ${schema}\n${extra}`;
const listJson = (out: string) => JSON.parse(out) as { name: string; type: string; table: string }[];

describe('profiles', () => {
  test('profiles.yml in the project directory; --target picks another output; env_var() inside', async () => {
    const dir = project({
      'dbt_project.yml': 'name: p\nprofile: p\n',
      'profiles.yml': profile('main', "    other:\n      type: duckdb\n      path: wh.duckdb\n      schema: \"{{ env_var('OTHER_SCHEMA', 'fallback') }}\"\n"),
      'models/a.sql': 'select 1 as x\n',
    });
    assert.equal(listJson((await build('list', dir, '--json')).out)[0]!.table, 'main.a');
    assert.equal(listJson((await build('list', dir, '--json', '--target', 'other')).out)[0]!.table, 'fallback.a');
    const r = await withEnv({ OTHER_SCHEMA: 'from_env' }, () => build('list', dir, '--json', '--target', 'other'));
    assert.equal(listJson(r.out)[0]!.table, 'from_env.a');
    const bad = await build('list', dir, '--target', 'nope');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /profile 'p' has no output 'nope' \(outputs: dev, other\)/);
  });

  test('--profiles-dir wins over DBT_PROFILES_DIR, which wins over the project directory', async () => {
    const dir = project({ 'dbt_project.yml': 'name: p\nprofile: p\n', 'profiles.yml': profile('in_project'), 'models/a.sql': 'select 1 as x\n' });
    const envDir = tempDir('profiles-env-');
    writeFiles(envDir, { 'profiles.yml': profile('from_env_dir') });
    const flagDir = tempDir('profiles-flag-');
    writeFiles(flagDir, { 'profiles.yml': profile('from_flag') });
    assert.equal(listJson((await build('list', dir, '--json')).out)[0]!.table, 'in_project.a');
    await withEnv({ DBT_PROFILES_DIR: envDir }, async () => {
      assert.equal(listJson((await build('list', dir, '--json')).out)[0]!.table, 'from_env_dir.a');
      assert.equal(listJson((await build('list', dir, '--json', '--profiles-dir', flagDir)).out)[0]!.table, 'from_flag.a');
    });
  });
});

describe('naming', () => {
  test("dbt's default: <target schema>_<custom>; a project's generate_schema_name and generate_alias_name override it", async () => {
    const files = {
      'dbt_project.yml': 'name: p\nprofile: p\nmodels:\n  p:\n    marts:\n      +schema: marts\n',
      'profiles.yml': profile('dev_schema'),
      'models/marts/m.sql': "{{ config(alias='m_alias') }}\nselect 1 as x\n",
      'models/plain.sql': 'select 1 as x\n',
    };
    const dflt = listJson((await build('list', project(files), '--json')).out);
    assert.deepEqual(dflt.map((n) => n.table).sort(), ['dev_schema.plain', 'dev_schema_marts.m_alias']);
    const custom = project({
      ...files,
      'macros/naming.sql':
        '{% macro generate_schema_name(custom_schema_name, node) -%}{{ custom_schema_name | trim if custom_schema_name else target.schema }}{%- endmacro %}\n' +
        "{% macro generate_alias_name(custom_alias_name, node) -%}{{ 'x_' ~ (custom_alias_name or node.name) }}{%- endmacro %}\n",
    });
    assert.deepEqual(listJson((await build('list', custom, '--json')).out).map((n) => n.table).sort(), ['dev_schema.x_plain', 'marts.x_m_alias']);
  });
});

describe('source freshness (build test --freshness)', () => {
  const duck = duckWarehouse();
  test('a fresh source passes, a stale one warns, a very stale one fails; run does not check freshness', async () => {
    const now = new Date().toISOString().replace('T', ' ').slice(0, 19);
    const dir = project({
      'dbt_project.yml': 'name: p\nprofile: p\nseeds:\n  p:\n    +column_types:\n      loaded_at: timestamp\n',
      'profiles.yml': profile(),
      'seeds/fresh.csv': `id,loaded_at\n1,${now}\n`,
      'seeds/stale.csv': 'id,loaded_at\n1,2000-01-01 00:00:00\n',
      'models/src.yml':
        'version: 2\nsources:\n  - name: s\n    schema: main\n    loaded_at_field: loaded_at\n    freshness:\n      warn_after: {count: 1, period: hour}\n    tables:\n' +
        '      - name: fresh\n      - name: stale\n      - name: very_stale\n        identifier: stale\n        freshness:\n          error_after: {count: 1, period: day}\n',
    });
    const r = await build('run', dir, '--json');
    assert.equal(r.code, 0, r.err);
    assert.ok(!(JSON.parse(r.out) as { results: { name: string }[] }).results.some((x) => x.name.startsWith('source_freshness')), 'run checks no freshness');
    const f = await build('test', dir, '--freshness', '--json');
    assert.equal(f.code, 1, f.err);
    const entries = JSON.parse(f.out) as { name: string; status: string }[];
    assert.deepEqual(entries.map((e) => `${e.name}:${e.status}`), ['source_freshness_s_fresh:ok', 'source_freshness_s_stale:ok', 'source_freshness_s_very_stale:fail']);
    assert.ok(logLines(f.err).includes("WRN test 'source_freshness_s_stale' failed: 1 failing row(s) (severity: warn)"), f.err);
    assert.equal((await duck.query(dir, 'select count(*) as n from main.stale'))[0]!.n, '1');
  });

  test('--freshness on a project of our own format is a usage error', async () => {
    const r = await build('test', duckProject({ 'a.sql': 'select 1' }), '--freshness');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--freshness checks the sources of a dbt project/);
  });
});

// depends_on: the model renders again when it runs, after the seed it asks about (dbt's idiom for a ref the SQL does not show).
const QUERY_MODEL = `-- depends_on: {{ ref('raw_x') }}
{% set r = run_query("select 41 + 1 as v, 'x' as w") %}
{% call statement('s', fetch_result=True) %}select 7 as n{% endcall %}
{% set rel = adapter.get_relation(database=none, schema=target.schema, identifier='raw_x') %}
{% set cols = adapter.get_columns_in_relation(rel) if rel else [] %}
select {{ r.columns[0].values()[0] }} as v, '{{ r.rows[0]['w'] }}' as w, {{ load_result('s')['data'][0][0] }} as n, {{ 1 if rel else 0 }} as seed_exists, {{ cols | length }} as ncols
`;

describe('the database at compile time: run_query, statement / load_result, adapter.get_relation / get_columns_in_relation', () => {
  const expectRuns = async (dir: string, args: string[], read: () => Promise<Record<string, string | null>[]>) => {
    // Rendered when it runs: the seed it depends on exists on the first run already.
    for (const seen of ['1', '1']) {
      const r = await build('run', dir, ...args);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(await read(), [{ v: '42', w: 'x', n: '7', seed_exists: seen, ncols: seen }]);
    }
  };
  test('on DuckDB (bin/service.js: the compile-time query process closes the file before the run opens it)', async () => {
    const dir = project({ 'dbt_project.yml': 'name: p\nprofile: p\n', 'profiles.yml': profile(), 'seeds/raw_x.csv': 'id\n1\n', 'models/q.sql': QUERY_MODEL });
    const bin = join(import.meta.dirname, '..', 'bin', 'service.js');
    assert.ok(existsSync(join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')), 'dist/ is missing: run `npm run build`');
    // Each run in its own process, as from a shell: a DuckDB file has one lock holder at a time.
    for (const seen of ['1', '1']) {
      const r = spawnSync(process.execPath, [bin, 'build', 'run', dir], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const duck = duckWarehouse();
      assert.deepEqual(await duck.query(dir, 'select * from main.q'), [{ v: '42', w: 'x', n: '7', seed_exists: seen, ncols: seen }]);
      // The test process reads the file through its actor (its own thread): close it so the next run's process can lock the file.
      await duckdbActor(join(dir, 'wh.duckdb')).close();
    }
  });
  test('on PostgreSQL', async (t) => {
    if (!(await requirePg(t))) return;
    const db = await createTempDatabase('dbt_query');
    const client = new pg.Client({ connectionString: db.url, types: { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig });
    try {
      await client.connect();
      const pgProfile = `p:\n  target: pg\n  outputs:\n    pg:\n      type: postgres\n      host: 127.0.0.1\n      user: postgres\n      dbname: ${db.name}\n      schema: s1\n`;
      const dir = project({ 'dbt_project.yml': 'name: p\nprofile: p\n', 'profiles.yml': pgProfile, 'seeds/raw_x.csv': 'id\n1\n', 'models/q.sql': QUERY_MODEL });
      await expectRuns(dir, ['--threads', '2'], async () => (await client.query('select * from s1.q')).rows);
    } finally {
      await client.end().catch(() => {});
      await db.drop();
    }
  });
});

describe('sling_build.yml', () => {
  test('is a config file name beside service_build.yml, with the both-names warning', async () => {
    const sling = project({ 'sling_build.yml': 'target: DUCK\n', 'env.yaml': 'connections:\n  DUCK:\n    type: duckdb\n    instance: wh.duckdb\n', 'a.sql': 'select 1 as x' });
    const r = await build('run', sling, '--json');
    assert.equal(r.code, 0, r.err);
    writeFiles(sling, { 'service_build.yml': 'target: DUCK\n' });
    const both = await build('list', sling);
    assert.deepEqual(logLines(both.err), ['WRN both service_build.yml and sling_build.yml found; using service_build.yml']);
  });
});
