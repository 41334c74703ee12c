// service_build.yml through the CLI: every key of
// the config keys, `${VAR}` substitution, the unresolved-field messages in their
// order, mode/schema/target resolution, and the load errors/warnings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, tempDir, compiledNode, duckProject, fatal, json, listNames, logLines, project, warehouseCreated, withEnv, DUCK_ENV } from './helpers/build-cli.js';

const tables = (r: Awaited<ReturnType<typeof build>>) => (json(r) as { name: string; table?: string }[]).map((e) => `${e.name}=${e.table}`);

test('target, vars and every defaults key reach list/compile', async () => {
  const dir = duckProject(
    {
      'raw.csv': 'id\n1\n',
      'staging/a.sql': 'select {{ n }} as n, {{ var("m") }} as m from raw',
      'staging/b.sql': "/**\nmode: view\ntags: [mine]\n**/\nselect * from {{ ref('a') }}",
      'marts/off.sql': "/**\nenabled: true\n**/\nselect 1 as x",
    },
    [
      'target: DUCK',
      'vars: {n: 7, m: "\'seven\'"}',
      'defaults:',
      '  mode: incremental',
      '  schema: analytics',
      '  database: lake',
      '  tags: [nightly]',
      '  unique_key: id',
      '  update_key: updated_at',
      '  merge_strategy: update+insert',
      '  enabled: false',
      '  hooks: {start: [{type: log, message: hi}], end: [{type: log, message: bye}]}',
      '  drop_cascade: true',
      '',
    ].join('\n'),
  );
  const list = await build('list', dir, '--json');
  assert.equal(list.code, 0, list.err);
  // defaults.enabled: false drops a and b; off re-enables itself. defaults.schema/database rename seeds too.
  assert.deepEqual(json(list), [
    { name: 'off', type: 'incremental', table: 'lake.analytics.off', file: 'marts/off.sql' },
    { name: 'raw', type: 'seed', table: 'lake.analytics.raw', file: 'raw.csv' },
  ]);
  const compile = await build('compile', dir, '--json', '-s', 'off');
  assert.equal(compile.code, 0, compile.err);
  assert.deepEqual(compiledNode(compile, 'off'), {
    name: 'off', type: 'model', table: 'lake.analytics.off', file: 'marts/off.sql', mode: 'incremental',
    unique_key: ['id'], update_key: 'updated_at', merge_strategy: 'update+insert', tags: ['nightly'],
    dependencies: [], tests: [], sql: 'select 1 as x',
  });
  const text = await build('compile', dir, '-s', 'off');
  assert.match(text.out, /\n {2}start_hooks:\n {4}- \{"type":"log","message":"hi"\}\n {2}end_hooks:\n {4}- \{"type":"log","message":"bye"\}\n/);
  assert.deepEqual(listNames(await build('list', dir, '--json', '-s', 'config.drop_cascade:true')), ['off']);
  assert.equal(warehouseCreated(dir), false);
});

test('vars render as top-level variables and through var()', async () => {
  const dir = duckProject({ 'a.sql': 'select {{ n }} as n, {{ var("m") }} as m' }, 'target: DUCK\nvars: {n: 7, m: 8}\n');
  const r = await build('compile', dir, '--json');
  assert.equal(compiledNode(r, 'a').sql, 'select 7 as n, 8 as m');
});

test('${VAR} and ${VAR:-fallback}; empty counts as unset; bare $VAR is literal; no re-scan', async () => {
  const dir = duckProject(
    { 'a.sql': "select '{{ v1 }}' as v1, '{{ v2 }}' as v2, '{{ v3 }}' as v3, '{{ v4 }}' as v4" },
    'target: ${SVC_T_WH:-DUCK}\nvars:\n  v1: ${SVC_T_A}\n  v2: x_${SVC_T_EMPTY:-fb}\n  v3: $SVC_T_A\n  v4: ${SVC_T_NESTED}\n',
  );
  await withEnv({ SVC_T_WH: undefined, SVC_T_A: 'alpha', SVC_T_EMPTY: '', SVC_T_NESTED: '${SVC_T_A}' }, async () => {
    const r = await build('compile', dir, '--json');
    assert.equal(r.code, 0, r.err);
    assert.equal((json(r) as { target: string }).target, 'DUCK');
    assert.equal(compiledNode(r, 'a').sql, "select 'alpha' as v1, 'x_fb' as v2, '$SVC_T_A' as v3, '${SVC_T_A}' as v4");
  });
  await withEnv({ SVC_T_WH: 'OTHER', SVC_T_A: 'alpha', SVC_T_NESTED: 'n' }, async () => {
    const r = await build('list', dir, '--json');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(tables(r), ['a=public.a']);
    const c = await build('compile', dir, '--json');
    assert.equal((json(c) as { target: string }).target, 'OTHER');
  });
});

test('lookup falls back to the env: map of $SERVICE_HOME_DIR/env.yaml; the process env wins', async () => {
  const home = tempDir('svc-home-');
  writeFileSync(join(home, 'env.yaml'), 'env:\n  SVC_T_HOMEVAR: from_home\n');
  const dir = duckProject({ 'a.sql': "select '{{ v }}' as v" }, 'target: DUCK\nvars: {v: "${SVC_T_HOMEVAR}"}\n');
  await withEnv({ SERVICE_HOME_DIR: home, SVC_T_HOMEVAR: undefined }, async () => {
    assert.equal(compiledNode(await build('compile', dir, '--json'), 'a').sql, "select 'from_home' as v");
  });
  await withEnv({ SERVICE_HOME_DIR: home, SVC_T_HOMEVAR: 'from_shell' }, async () => {
    assert.equal(compiledNode(await build('compile', dir, '--json'), 'a').sql, "select 'from_shell' as v");
  });
});

test('a substituted value that breaks YAML is a parse error', async () => {
  const dir = duckProject({ 'a.sql': 'select 1' }, 'target: ${SVC_T_BAD}\n');
  await withEnv({ SVC_T_BAD: '[unclosed' }, async () => {
    const r = await build('list', dir);
    assert.equal(r.code, 1);
    assert.match(fatal(r), /could not load service_build\.yml: could not parse config file: ./);
  });
});

const unset = (field: string, name: string, hint: string) =>
  `service_build.yml: ${field} uses \${${name}} but ${name} is not set.\nSet it in ~/.service/env.yaml under \`env:\` or export it in the shell${hint}`;
const TARGET_HINT = ',\nor pass --target <name>.';
const SCHEMA_HINT = ',\nor pass --schema <name>.';

test('unresolved fields are reported one at a time in the documented order, each with its hint', async () => {
  const dir = duckProject(
    { 'a.sql': 'select 1 as x' },
    [
      'target: ${SVC_U1}',
      'dev: {schema: "d_${SVC_U3}", target: "${SVC_U2}", database: "${SVC_U4}"}',
      'defaults: {schema: "${SVC_U5}", database: "${SVC_U6}"}',
      'vars: {b: "${SVC_U8}", a: "${SVC_U7}"}',
      '',
    ].join('\n'),
  );
  const all = ['SVC_U1', 'SVC_U2', 'SVC_U3', 'SVC_U4', 'SVC_U5', 'SVC_U6', 'SVC_U7', 'SVC_U8'];
  const steps: [string[], string][] = [
    // dev mode with dev.target: `target` is not used, dev.target is.
    [[], unset('dev.target', 'SVC_U2', TARGET_HINT)],
    [['SVC_U2'], unset('dev.schema', 'SVC_U3', SCHEMA_HINT)],
    [['SVC_U2', 'SVC_U3'], unset('dev.database', 'SVC_U4', '.')],
    [['SVC_U2', 'SVC_U3', 'SVC_U4'], unset('defaults.schema', 'SVC_U5', '.')],
    [['SVC_U2', 'SVC_U3', 'SVC_U4', 'SVC_U5'], unset('defaults.database', 'SVC_U6', '.')],
    // vars keys sorted: a before b although b is written first.
    [['SVC_U2', 'SVC_U3', 'SVC_U4', 'SVC_U5', 'SVC_U6'], unset('vars.a', 'SVC_U7', '.')],
    [['SVC_U2', 'SVC_U3', 'SVC_U4', 'SVC_U5', 'SVC_U6', 'SVC_U7'], unset('vars.b', 'SVC_U8', '.')],
  ];
  for (const [set, message] of steps) {
    const env = Object.fromEntries(all.map((k) => [k, set.includes(k) ? 'duck' : undefined]));
    await withEnv(env, async () => {
      const r = await build('list', dir);
      assert.equal(r.code, 1, `with ${set.join(',')}: ${r.err}`);
      assert.equal(r.out, '');
      assert.equal(fatal(r), `could not load build project from ${dir}: ${message}`);
    });
  }
  await withEnv(Object.fromEntries(all.map((k) => [k, undefined])), async () => {
    // --prod: target is used (no dev.target in prod), dev.* are not.
    assert.equal(fatal(await build('list', dir, '--prod')), `could not load build project from ${dir}: ${unset('target', 'SVC_U1', TARGET_HINT)}`);
    // --target skips target and dev.target; --schema skips dev.schema.
    assert.equal(fatal(await build('list', dir, '--target', 'X')), `could not load build project from ${dir}: ${unset('dev.schema', 'SVC_U3', SCHEMA_HINT)}`);
    assert.equal(fatal(await build('list', dir, '-t', 'X', '--schema', 's')), `could not load build project from ${dir}: ${unset('dev.database', 'SVC_U4', '.')}`);
    assert.equal(fatal(await build('list', dir, '--prod', '--target', 'X')), `could not load build project from ${dir}: ${unset('defaults.schema', 'SVC_U5', '.')}`);
  });
  await withEnv({ ...Object.fromEntries(all.map((k) => [k, undefined])), SVC_U5: 's', SVC_U6: 'd' }, async () => {
    // --vars supplying a key avoids that key's error.
    assert.equal(fatal(await build('list', dir, '--prod', '-t', 'X', '--vars', '{"a": 1}')), `could not load build project from ${dir}: ${unset('vars.b', 'SVC_U8', '.')}`);
    const ok = await build('list', dir, '--prod', '-t', 'X', '--vars', '{"a": 1, "b": 2}', '--json');
    assert.equal(ok.code, 0, ok.err);
    assert.deepEqual(tables(ok), ['a=d.s.a']);
  });
});

test('dev mode without dev.target uses `target`; A5 target: ${WH} unset', async () => {
  const dir = duckProject({ 'a.sql': 'select 1 as x' }, 'target: ${SVC_WH}\ndev: {schema: dev_x}\n');
  await withEnv({ SVC_WH: undefined }, async () => {
    const r = await build('compile', dir);
    assert.equal(r.code, 1);
    assert.ok(r.err.includes(unset('target', 'SVC_WH', TARGET_HINT)), r.err);
    assert.ok(r.err.includes('or pass --target <name>.'));
    // An empty value counts as unset.
    const empty = await withEnv({ SVC_WH: '' }, () => build('compile', dir));
    assert.ok(empty.err.includes(unset('target', 'SVC_WH', TARGET_HINT)), empty.err);
    const ok = await build('compile', dir, '--target', 'DUCK', '--json');
    assert.equal(ok.code, 0, ok.err);
    assert.equal(compiledNode(ok, 'a').table, 'dev_x.a');
  });
});

test('A4 --prod avoids the dev.schema error; DEV_USER set gives dev names', async () => {
  const dir = duckProject({ 'staging/s.sql': 'select 1 as x' }, 'target: DUCK\ndev: {schema: dev_${DEV_USER}}\n');
  await withEnv({ DEV_USER: undefined }, async () => {
    const r = await build('list', dir, '--json');
    assert.equal(r.code, 1);
    assert.ok(fatal(r).endsWith(unset('dev.schema', 'DEV_USER', SCHEMA_HINT)), r.err);
    const prod = await build('list', dir, '--json', '--prod');
    assert.equal(prod.code, 0, prod.err);
    assert.deepEqual(tables(prod), ['s=staging.s']);
    const forced = await build('list', dir, '--json', '--schema', 'tmp_x');
    assert.deepEqual(tables(forced), ['s=tmp_x.s']);
  });
  await withEnv({ DEV_USER: 'ann' }, async () => {
    assert.deepEqual(tables(await build('list', dir, '--json')), ['s=dev_ann.s']);
  });
});

test('--prod with --schema is a usage error (exit 2)', async () => {
  const dir = duckProject({ 'a.sql': 'select 1' });
  const r = await build('list', dir, '--prod', '--schema', 'x');
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.equal(r.err, "error: cannot combine --prod and --schema\nRun 'service build list --help' for usage.\n");
});

test('dev mode with an empty dev schema', async () => {
  for (const dev of ['dev: {target: DUCK}', 'dev:', "dev: {schema: ''}"]) {
    const dir = duckProject({ 'a.sql': 'select 1' }, `target: DUCK\n${dev}\n`);
    const r = await build('list', dir);
    assert.equal(r.code, 1, dev);
    assert.ok(fatal(r).endsWith('dev mode requires a schema: set dev.schema in service_build.yml or pass --schema <name>'), r.err);
    assert.equal((await build('list', dir, '--schema', 'x')).code, 0);
  }
});

test('dev.target replaces target in dev mode only; --target wins', async () => {
  const dir = project({
    'service_build.yml': 'target: DUCK\ndev: {schema: d, target: DUCK2}\n',
    'env.yaml': DUCK_ENV + '  DUCK2:\n    type: duckdb\n    instance: wh2.duckdb\n',
    'a.sql': "select '{{ target.name }}' as t",
  });
  const target = async (...extra: string[]) => (json(await build('compile', dir, '--json', ...extra)) as { target: string }).target;
  assert.equal(await target(), 'DUCK2');
  assert.equal(await target('--prod'), 'DUCK');
  assert.equal(await target('-t', 'DUCK'), 'DUCK');
  assert.equal(compiledNode(await build('compile', dir, '--json'), 'a').sql, "select 'DUCK2' as t");
});

test('both .yml and .yaml: warning, .yml used; names match case-insensitively; empty file is valid', async () => {
  const dir = duckProject({ 'service_build.yaml': 'target: NOPE\n', 'a.sql': 'select 1' });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal((json(r) as { target: string }).target, 'DUCK');
  assert.deepEqual(logLines(r.err), ['WRN both service_build.yml and service_build.yaml found; using service_build.yml']);

  const upper = project({ 'SERVICE_BUILD.YAML': 'target: DUCK\n', 'env.yaml': DUCK_ENV, 'a.sql': 'select 1' });
  const u = await build('list', upper, '--json');
  assert.deepEqual(tables(u), ['a=public.a']);

  const empty = project({ 'service_build.yml': '', 'a.sql': 'select 1' });
  const e = await build('list', empty, '--json');
  assert.equal(e.code, 0, e.err);
  assert.deepEqual(json(e), [{ name: 'a', type: 'full-refresh', file: 'a.sql' }]);
});

test('invalid YAML and type errors: could not load <file>: could not parse config file: …', async () => {
  for (const text of ['target: [unclosed\n', 'target: [a, b]\n', 'dbt_project: maybe\n', '- a\n- b\n']) {
    const dir = duckProject({ 'a.sql': 'select 1' }, text);
    const r = await build('list', dir, '--json');
    assert.equal(r.code, 1, text);
    assert.equal(r.out, '');
    assert.match(fatal(r), /^could not load build project from .*: could not load service_build\.yml: could not parse config file: \S/, text);
    // One fatal line: the YAML library's code frame is not part of the detail.
    assert.equal(r.err.split('\n').length, 2, r.err);
  }
});

test('compile: an unsupported or malformed target connection is a target error', async () => {
  const mysql = project({ 'service_build.yml': 'target: MY\n', 'env.yaml': 'connections:\n  MY:\n    type: mysql\n    url: mysql://u@h/db\n', 'a.sql': 'select 1' });
  const r = await build('compile', mysql);
  assert.equal(r.code, 1);
  assert.equal(r.err, "fatal: target 'MY' has type 'mysql'; service build supports postgres and duckdb\n");
  const broken = project({ 'service_build.yml': 'target: D\n', 'env.yaml': 'connections:\n  D:\n    type: duckdb\n', 'a.sql': 'select 1' });
  const b = await build('compile', broken);
  assert.equal(b.code, 1);
  assert.match(b.err, /^fatal: connection 'D': duckdb connections need an instance path/);
  // list never looks at the connection.
  assert.equal((await build('list', mysql, '--json')).code, 0);
});

test('an environment variable holding a duckdb:// URL is a target; compile does not create the file', async () => {
  const dir = project({ 'service_build.yml': 'target: SVC_T_DUCKURL\n', 'a.sql': "select '{{ target.type }}' as t" });
  await withEnv({ SVC_T_DUCKURL: `duckdb://${dir}/wh.duckdb` }, async () => {
    const r = await build('compile', dir, '--json');
    assert.equal(r.code, 0, r.err);
    assert.equal(compiledNode(r, 'a').sql, "select 'duckdb' as t");
    assert.equal(warehouseCreated(dir), false);
  });
});

test('defaults.mode and defaults.merge_strategy validation; snapshot warning', async () => {
  const cases: [string, string][] = [
    ['defaults: {mode: bogus}', "service_build.yml: unknown defaults.mode 'bogus'; expected one of: append, full-refresh, incremental, truncate, view"],
    ['defaults: {mode: ephemeral}', 'service_build.yml: defaults.mode: ephemeral models are not supported; use view or table'],
    ['defaults: {merge_strategy: upsert}', "service_build.yml: unknown defaults.merge_strategy 'upsert'; expected one of: delete+insert, update+insert, insert"],
  ];
  for (const [yaml, message] of cases) {
    const dir = duckProject({ 'a.sql': 'select 1' }, `target: DUCK\n${yaml}\n`);
    const r = await build('list', dir);
    assert.equal(r.code, 1, yaml);
    assert.equal(fatal(r), `could not load build project from ${dir}: ${message}`);
  }
  const snap = duckProject({ 'a.sql': 'select 1' }, 'target: DUCK\ndefaults: {mode: snapshot}\n');
  const r = await build('list', snap, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(tables(r), ['a=public.a']);
  assert.equal((json(r) as { type: string }[])[0]!.type, 'append');
  assert.deepEqual(logLines(r.err), ["WRN service_build.yml: defaults.mode: 'snapshot' mode is deprecated and means append-only insert; use 'append'"]);
  const table = duckProject({ 'a.sql': 'select 1' }, 'target: DUCK\ndefaults: {mode: " Table "}\n');
  assert.equal((json(await build('list', table, '--json')) as { type: string }[])[0]!.type, 'full-refresh');
});

test('unknown keys are ignored and named on a warning (nothing declared is dropped in silence)', async () => {
  const dir = duckProject({ 'a.sql': 'select 1' }, 'target: DUCK\nprofile: x\ndefaults: {range: {advance: 1d}}\n');
  const r = await build('list', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(logLines(r.err), ['WRN service_build.yml: ignoring unknown key(s): profile, defaults.range']);
});
