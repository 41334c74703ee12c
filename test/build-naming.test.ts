// Node naming through list/compile: every row of the
// Table, deep folders, overrides and their dev-mode warning, database
// precedence, name rendering in SQL and the PostgreSQL limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, compiledNode, duckProject, fatal, json, logLines, project, warehouseCreated, withEnv } from './helpers/build-cli.js';

const tableOf = async (dir: string, name: string, ...extra: string[]) => {
  const r = await build('list', dir, '--json', ...extra);
  assert.equal(r.code, 0, r.err);
  const e = (json(r) as { name: string; table: string }[]).find((x) => x.name === name);
  assert.ok(e, `${name} not listed: ${r.out}`);
  return e.table;
};

test('examples table, row by row', async () => {
  const plain = duckProject({
    'raw.sql': 'select 1',
    'staging/stg_orders.sql': 'select 1',
    'marts/core/dim_customers.sql': 'select 1',
    'staging/country_codes.csv': 'code\nNL\n',
  });
  assert.equal(await tableOf(plain, 'raw'), 'public.raw');
  assert.equal(await tableOf(plain, 'stg_orders'), 'staging.stg_orders');
  assert.equal(await tableOf(plain, 'dim_customers'), 'marts.dim_customers');
  assert.equal(await tableOf(plain, 'country_codes'), 'staging.country_codes');
  assert.equal(await tableOf(plain, 'stg_orders', '--schema', 'tmp_x'), 'tmp_x.stg_orders');

  const dev = duckProject({ 'staging/stg_orders.sql': 'select 1' }, 'target: DUCK\ndev: {schema: dev_ann}\n');
  assert.equal(await tableOf(dev, 'stg_orders'), 'dev_ann.stg_orders');
  assert.equal(await tableOf(dev, 'stg_orders', '--prod'), 'staging.stg_orders');

  const defaults = duckProject({ 'staging/a.sql': 'select 1' }, 'target: DUCK\ndefaults: {schema: analytics}\n');
  assert.equal(await tableOf(defaults, 'a'), 'analytics.a');

  const lake = duckProject({ 'staging/x.sql': '/**\ndatabase: lake\n**/\nselect 1' });
  assert.equal(await tableOf(lake, 'x'), 'lake.staging.x');
});

test('front-matter schema wins in dev mode with a warning; the prod name still matches refs and selectors', async () => {
  const dir = duckProject(
    {
      'marts/fct.sql': '/**\nschema: reporting\n**/\nselect 1 as x',
      'marts/use.sql': "select * from {{ ref('marts.fct') }} join marts.fct f2 on true",
      'staging/same.sql': '/**\nschema: dev_ann\n**/\nselect 1',
    },
    'target: DUCK\ndev: {schema: dev_ann}\n',
  );
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'fct').table, 'reporting.fct');
  assert.equal(compiledNode(r, 'use').table, 'dev_ann.use');
  assert.equal(compiledNode(r, 'use').sql, 'select * from reporting.fct join reporting.fct f2 on true');
  assert.deepEqual(compiledNode(r, 'use').dependencies, ['fct']);
  // An override equal to the dev schema changes nothing and is not worth a warning.
  assert.deepEqual(logLines(r.err), ["WRN model 'fct': schema 'reporting' overrides the dev schema 'dev_ann'"]);
  const sel = await build('list', dir, '--json', '-s', 'MARTS.FCT');
  assert.deepEqual((json(sel) as { name: string }[]).map((e) => e.name), ['fct']);
  // In prod mode the override applies too, without a warning.
  const prod = await build('list', dir, '--json', '--prod');
  assert.equal(prod.err, '');
  assert.equal(await tableOf(dir, 'fct', '--prod'), 'reporting.fct');
});

test('database precedence: front-matter > dev.database (dev) > defaults.database; seeds only the latter two', async () => {
  const dir = duckProject(
    { 'm.sql': 'select 1', 'fm.sql': '/**\ndatabase: lake\n**/\nselect 1', 's.csv': 'a\n1\n' },
    'target: DUCK\ndev: {schema: d, database: devdb}\ndefaults: {database: defdb}\n',
  );
  assert.equal(await tableOf(dir, 'm'), 'devdb.d.m');
  assert.equal(await tableOf(dir, 'fm'), 'lake.d.fm');
  assert.equal(await tableOf(dir, 's'), 'devdb.d.s');
  assert.equal(await tableOf(dir, 'm', '--prod'), 'defdb.public.m');
  assert.equal(await tableOf(dir, 'fm', '--prod'), 'lake.public.fm');
  assert.equal(await tableOf(dir, 's', '--prod'), 'defdb.public.s');
});

test('a three-level folder project compiles with the first folder as schema in prod and the dev schema in dev', async () => {
  const dir = duckProject(
    {
      'a/b/c/x.sql': 'select 1 as id',
      'a/b/y.sql': "select * from {{ ref('x') }}",
      'a/z.sql': 'select * from a.y',
      'q/r/w.sql': 'select * from @z join a.x using (id)',
      'top.sql': "select * from {{ ref('q.w') }}",
    },
    'target: DUCK\ndev: {schema: dev_${SVC_N_USER:-me}}\n',
  );
  const prod = await build('compile', dir, '--json', '--prod');
  assert.equal(prod.code, 0, prod.err);
  const p = (n: string) => compiledNode(prod, n);
  assert.deepEqual(['x', 'y', 'z', 'w', 'top'].map((n) => p(n).table), ['a.x', 'a.y', 'a.z', 'q.w', 'public.top']);
  assert.equal(p('y').sql, 'select * from a.x');
  assert.equal(p('w').sql, 'select * from a.z join a.x using (id)');
  assert.deepEqual(p('w').dependencies, ['x', 'z']);
  assert.deepEqual((json(prod) as { order: string[] }).order, ['x', 'y', 'z', 'w', 'top']);

  const dev = await withEnv({ SVC_N_USER: 'ann' }, () => build('compile', dir, '--json'));
  assert.equal(dev.code, 0, dev.err);
  const d = (n: string) => compiledNode(dev, n);
  assert.deepEqual(['x', 'y', 'z', 'w', 'top'].map((n) => d(n).table), ['dev_ann.x', 'dev_ann.y', 'dev_ann.z', 'dev_ann.w', 'dev_ann.top']);
  assert.equal(d('z').sql, 'select * from dev_ann.y');
  assert.equal(d('w').sql, 'select * from dev_ann.z join dev_ann.x using (id)');
  assert.equal(d('top').sql, 'select * from dev_ann.w');
  assert.equal(warehouseCreated(dir), false);
});

test('names are bare when lower-case identifiers, otherwise quoted; plain-text output never quotes', async () => {
  const dir = duckProject({
    'Orders.sql': 'select 1 as id',
    'Staging/stg.sql': 'select 1 as id',
    'my-data/m.sql': 'select 1 as id',
    'use.sql': `select * from {{ ref('Orders') }}, {{ ref('stg') }}, {{ ref('m') }}, {{ this }}`,
  });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'use').sql, 'select * from public."Orders", "Staging".stg, "my-data".m, public.use');
  assert.equal(compiledNode(r, 'Orders').table, 'public.Orders');
  assert.equal(compiledNode(r, 'stg').table, 'Staging.stg');
});

const PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

test('PostgreSQL: a database part is a compile error (models and seeds); compile does not connect', async () => {
  await withEnv({ SVC_PG: PG_URL }, async () => {
    const model = project({ 'service_build.yml': 'target: SVC_PG\n', 'x.sql': '/**\ndatabase: lake\n**/\nselect 1' });
    const r = await build('compile', model);
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.equal(fatal(r), "could not compile build project: model 'x': database 'lake' is set but postgres does not support database.schema.table names");
    const seed = project({ 'service_build.yml': 'target: SVC_PG\ndefaults: {database: wh}\n', 's.csv': 'a\n1\n' });
    assert.equal(fatal(await build('compile', seed)), "could not compile build project: seed 's': database 'wh' is set but postgres does not support database.schema.table names");
    // list never looks at the target.
    assert.equal((await build('list', model, '--json')).code, 0);
    // The same project on DuckDB is fine.
    const ok = duckProject({ 'x.sql': '/**\ndatabase: lake\n**/\nselect 1' });
    assert.equal((await build('compile', ok, '--json')).code, 0);
    const tpl = project({ 'service_build.yml': 'target: SVC_PG\n', 'x.sql': "select '{{ target.type }}'" });
    assert.equal(compiledNode(await build('compile', tpl, '--json'), 'x').sql, "select 'postgres'");
  });
});

test('PostgreSQL: a schema or name over 63 bytes is a compile error', async () => {
  const long = 'n'.repeat(64);
  const fits = 'n'.repeat(63);
  const wide = 'é'.repeat(32); // 32 characters, 64 bytes
  await withEnv({ SVC_PG: PG_URL }, async () => {
    const cases: [Record<string, string>, string][] = [
      [{ [`${long}.sql`]: 'select 1' }, `model '${long}': identifier '${long}' exceeds 63 bytes`],
      [{ [`${long}/m.sql`]: 'select 1' }, `model 'm': identifier '${long}' exceeds 63 bytes`],
      [{ [`${wide}.sql`]: 'select 1' }, `model '${wide}': identifier '${wide}' exceeds 63 bytes`],
    ];
    for (const [files, message] of cases) {
      const dir = project({ 'service_build.yml': 'target: SVC_PG\n', ...files });
      const r = await build('compile', dir);
      assert.equal(r.code, 1, message);
      assert.equal(fatal(r), `could not compile build project: ${message}`);
    }
    const ok = project({ 'service_build.yml': 'target: SVC_PG\n', [`${fits}/${fits}.sql`]: 'select 1' });
    const r = await build('compile', ok, '--json');
    assert.equal(r.code, 0, r.err);
    const duck = duckProject({ [`${long}.sql`]: 'select 1' });
    assert.equal((await build('compile', duck, '--json')).code, 0);
  });
});
