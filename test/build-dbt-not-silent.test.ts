/**
 * Nothing silent: every dbt feature service build does not
 * run is an error or a warning that names the file and the feature — one
 * test each — and our own format names files it does not read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, duckProject, logLines, project } from './helpers/build-cli.js';

const PROFILE = 'p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n';

/** A small dbt project plus `files`; `list` loads and compiles it without opening the database. */
function dbt(files: Readonly<Record<string, string>>, projectYml = ''): string {
  return project({ 'dbt_project.yml': `name: p\nprofile: p\n${projectYml}`, 'profiles.yml': PROFILE, 'models/a.sql': 'select 1 as id\n', ...files });
}

async function fails(dir: string, pattern: RegExp): Promise<void> {
  const r = await build('list', dir);
  assert.equal(r.code, 1, `expected a failure, got: ${r.out}${r.err}`);
  assert.match(r.err, pattern);
}

async function warns(dir: string, line: string): Promise<void> {
  const r = await build('list', dir);
  assert.equal(r.code, 0, r.err);
  assert.ok(logLines(r.err).includes(`WRN ${line}`), `missing warning "${line}" in:\n${r.err}`);
}

describe('dbt features that do not run fail or warn, naming file and feature', () => {
  test('a Python model is an error', () => fails(dbt({ 'models/py_model.py': 'def model(dbt, session):\n    return None\n' }), /models\/py_model\.py: Python models are not supported/));
  test('an unknown materialization is an error', () =>
    fails(dbt({ 'models/mv.sql': "{{ config(materialized='materialized_view') }}\nselect 1 as x\n" }), /models\/mv\.sql: materialized 'materialized_view' is not supported/));
  test('a custom materialization is an error', () =>
    fails(dbt({ 'macros/m.sql': '{% materialization mine, default %}{% endmaterialization %}\n' }), /macros\/m\.sql: custom materializations are not supported/));
  test('an unsupported config key warns', () => warns(dbt({ 'models/b.sql': "{{ config(grants={'select': ['x']}) }}\nselect 1 as x\n" }), "models/b.sql: config 'grants' is not supported by service build and has no effect"));
  test('an unsupported key in a dbt_project.yml folder tree warns', () =>
    warns(dbt({}, 'models:\n  p:\n    +contract:\n      enforced: true\n'), "models/a.sql: config 'contract' is not supported by service build and has no effect"));
  test('a file nothing reads in a model folder warns', () => warns(dbt({ 'models/notes.txt': 'hello\n' }), 'models/notes.txt: not used (model folders hold .sql models, .yml properties and .md docs)'));
  test('a package in packages.yml that is not installed is an error', () =>
    fails(dbt({ 'packages.yml': 'packages:\n  - package: dbt-labs/dbt_utils\n    version: 1.1.1\n' }), /packages\.yml: package 'dbt-labs\/dbt_utils' is not installed under dbt_packages\/ \(looked for a package named 'dbt_utils'\); run `dbt deps`/));
  test('on-run-start hooks warn', () => warns(dbt({}, "on-run-start: ['select 1']\n"), 'dbt_project.yml: on-run-start/on-run-end hooks are not supported by service build and are not run'));
  test('an unknown dbt_project.yml key warns', () => warns(dbt({}, 'semantic-layer: 1\n'), "dbt_project.yml: key 'semantic-layer' is not supported and has no effect"));
  test('a dispatch: entry without search_order is an error', () => fails(dbt({}, 'dispatch:\n  - macro_namespace: x\n'), /dbt_project\.yml: dispatch\[0\] needs macro_namespace \(a name\) and search_order/));
  test('a store_failures_as other than table, view or ephemeral is an error naming the file', () =>
    fails(
      dbt({ 'models/schema.yml': 'version: 2\nmodels:\n  - name: a\n    columns:\n      - name: id\n        tests:\n          - unique:\n              config:\n                store_failures_as: tabel\n' }),
      /models\/schema\.yml: test 'unique': store_failures_as must be table, view or ephemeral, got 'tabel'/,
    ));
  test('an undefined generic test is an error', () =>
    fails(dbt({ 'models/schema.yml': 'version: 2\nmodels:\n  - name: a\n    columns:\n      - name: id\n        tests: [is_even]\n' }), /models\/schema\.yml: test 'is_even' on 'a': no generic test named 'is_even'/));
  test('an unsupported incremental strategy is an error', () =>
    fails(dbt({ 'models/i.sql': "{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}\nselect 1 as x\n" }), /models\/i\.sql: incremental_strategy 'insert_overwrite' is not supported/));
  test('on_schema_change sync_all_columns is an error', () =>
    fails(dbt({ 'models/i.sql': "{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}\nselect 1 as x\n" }), /models\/i\.sql: on_schema_change 'sync_all_columns' is not supported/));
  test('exposures in a properties file warn', () =>
    warns(dbt({ 'models/exp.yml': 'version: 2\nexposures:\n  - name: dash\n    type: dashboard\n    owner: {email: a@b.c}\n' }), "models/exp.yml: 'exposures' are not supported by service build and are not run"));
  test('source freshness without loaded_at_field is an error', () =>
    fails(dbt({ 'models/src.yml': 'version: 2\nsources:\n  - name: s\n    freshness:\n      warn_after: {count: 1, period: hour}\n    tables:\n      - name: t\n' }), /models\/src\.yml: source 's\.t': freshness needs loaded_at_field/));
  test('a model described in a properties file without a model file warns', () =>
    warns(dbt({ 'models/schema.yml': 'version: 2\nmodels:\n  - name: ghost\n' }), "models/schema.yml: model 'ghost' is described but no model file defines it"));
  test("an installed package's models warn (only its macros and tests are loaded)", () =>
    warns(dbt({ 'dbt_packages/pkg/dbt_project.yml': 'name: pkg\n', 'dbt_packages/pkg/models/pm.sql': 'select 1 as x\n' }), "dbt_packages/pkg: the package's 1 model(s) are not built (only its macros and generic tests are loaded)"));
  test('a snapshot file without a snapshot block warns', () => warns(dbt({ 'snapshots/s.sql': 'select 1\n' }), 'snapshots/s.sql: not used (no {% snapshot %} block)'));
});

describe('our own format names files it does not read', () => {
  test('a dbt_project.yml beside service_build.yml is named as not read', async () => {
    const r = await build('list', duckProject({ 'a.sql': 'select 1', 'dbt_project.yml': 'name: p\n' }));
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(logLines(r.err), ["WRN dbt_project.yml is not read: service_build.yml makes this a project of service build's own format (remove it to build the dbt project)"]);
  });

  test('a Python file in a build project warns', async () => {
    const r = await build('list', duckProject({ 'a.sql': 'select 1', 'staging/clean.py': 'print(1)\n' }));
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(logLines(r.err), ['WRN staging/clean.py: not used (Python models are not supported)']);
  });
});
