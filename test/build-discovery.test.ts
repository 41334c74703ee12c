// Project discovery through `service build list`: build
// path checks, file classification, nested projects, dbt_project mode, and
// the duplicate-name errors with their exact texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { build, compiledNode, duckProject, fatal, json, project } from './helpers/build-cli.js';

type Entry = { name: string; type: string; table?: string; file: string };
const entries = async (dir: string, ...extra: string[]): Promise<Entry[]> => {
  const r = await build('list', dir, '--json', ...extra);
  assert.equal(r.code, 0, r.err);
  return json(r) as Entry[];
};
const files = (list: Entry[]) => list.map((e) => e.file).sort();

test('a missing path or a file path fails with the absolute path (exit 1)', async () => {
  const dir = project({ 'a.sql': 'select 1' });
  const missing = join(dir, 'nope');
  const r = await build('list', missing);
  assert.equal(r.code, 1);
  assert.equal(r.err, `fatal: could not access project directory: ${missing}\n`);
  const f = await build('list', join(dir, 'a.sql'));
  assert.equal(f.code, 1);
  assert.equal(f.err, `fatal: path is not a directory: ${join(dir, 'a.sql')}\n`);
  // list and compile have no "no config" guard: a config-less directory is a project.
  assert.deepEqual(await entries(dir), [{ name: 'a', type: 'full-refresh', file: 'a.sql' }]);
});

test('classification: hidden entries, node_modules, config files, macros, seeds by extension, other files', async () => {
  const dir = duckProject({
    'model.sql': 'select 1',
    'Upper.CSV': 'a\n1\n',
    'data.Json': '[{"a":1}]',
    'events.PARQUET': 'not really parquet; never read by list',
    'package.json': '{"name":"x"}',
    'helpers.macros.sql': '{% macro m() %}1{% endmacro %}',
    'staging/LOUD.MACROS.SQL': '{% macro loud() %}2{% endmacro %}',
    'staging/s.sql': 'select {{ loud() }} as x',
    '.hidden.sql': 'select 1',
    '.dot/inner.sql': 'select 1',
    'staging/.secret/x.sql': 'select 1',
    'node_modules/pkg/dep.sql': 'select 1',
    'node_modules/pkg/package.json': '{}',
    'deep/node_modules/z.csv': 'a\n1\n',
    'README.md': '# hi',
    'notes.txt': 'x',
    'schema.yml': 'x: 1',
  });
  const list = await entries(dir);
  assert.deepEqual(files(list), ['Upper.CSV', 'data.Json', 'events.PARQUET', 'model.sql', 'package.json', 'staging/s.sql']);
  const byName = Object.fromEntries(list.map((e) => [e.name, e]));
  assert.equal(byName.Upper!.type, 'seed');
  assert.equal(byName.package!.type, 'seed');
  assert.equal(byName.model!.type, 'full-refresh');
  const c = await build('compile', dir, '--json', '-s', 'Upper,data,events,package,s');
  assert.equal(c.code, 0, c.err);
  assert.equal(compiledNode(c, 'Upper').format, 'csv');
  assert.equal(compiledNode(c, 'data').format, 'json');
  assert.equal(compiledNode(c, 'events').format, 'parquet');
  assert.equal(compiledNode(c, 'package').format, 'json');
  // The upper-case macro file is a macro file in scope for staging/.
  assert.equal(compiledNode(c, 's').sql, 'select 2 as x');
});

test('nested projects (own config file, any depth) are skipped with their whole subtree', async () => {
  const dir = project({
    'service_build.yml': '',
    'top.sql': 'select 1',
    'sub/service_build.yml': 'target: X\n',
    'sub/inner.sql': 'select 1',
    'sub/more/deeper.sql': 'select 1',
    'a/b/service_build.yaml': '',
    'a/b/deep.sql': 'select 1',
    'a/keep.sql': 'select 1',
    'c/Service_Build.YML': '',
    'c/cased.sql': 'select 1',
  });
  assert.deepEqual(files(await entries(dir)), ['a/keep.sql', 'top.sql']);
});

test('dbt_project: true discovers models/ and seeds/ only; schema from the path under them; file relative to the build path', async () => {
  const dir = duckProject(
    {
      'models/staging/x.sql': "select * from {{ ref('country_codes') }}",
      'models/root_model.sql': 'select 1',
      'models/helpers.macros.sql': '{% macro one() %}1{% endmacro %}',
      'models/marts/y.sql': 'select {{ one() }} as one',
      'models/stray.csv': 'a\n1\n',
      'seeds/country_codes.csv': 'code\nNL\n',
      'seeds/lookup/kinds.csv': 'k\n1\n',
      'seeds/not_a_model.sql': 'select 1',
      'outside.sql': 'select 1',
      'outside.csv': 'a\n1\n',
    },
    'target: DUCK\ndbt_project: true\n',
  );
  const list = await entries(dir);
  assert.deepEqual(
    list.map((e) => `${e.name}=${e.table}@${e.file}`).sort(),
    [
      'country_codes=public.country_codes@seeds/country_codes.csv',
      'kinds=lookup.kinds@seeds/lookup/kinds.csv',
      'root_model=public.root_model@models/root_model.sql',
      'x=staging.x@models/staging/x.sql',
      'y=marts.y@models/marts/y.sql',
    ],
  );
  const c = await build('compile', dir, '--json', '-s', 'x,y');
  assert.equal(compiledNode(c, 'x').sql, 'select * from public.country_codes');
  assert.equal(compiledNode(c, 'y').sql, 'select 1 as one');
  // path: selectors see the build-path-relative file and the discovery-relative path.
  assert.deepEqual((await entries(dir, '-s', 'path:models/staging')).map((e) => e.name), ['x']);
  assert.deepEqual((await entries(dir, '-s', 'path:staging')).map((e) => e.name), ['x']);
});

test('dbt_project map form overrides either directory; a missing directory contributes nothing', async () => {
  const dir = duckProject(
    { 'sql/a/m.sql': 'select 1', 'data/d.csv': 'x\n1\n', 'models/ignored.sql': 'select 1', 'seeds/ignored.csv': 'x\n1\n' },
    'target: DUCK\ndbt_project: {models_path: sql, seeds_path: data}\n',
  );
  assert.deepEqual((await entries(dir)).map((e) => `${e.table}@${e.file}`).sort(), ['a.m@sql/a/m.sql', 'public.d@data/d.csv']);
  const half = duckProject({ 'sql/m.sql': 'select 1', 'seeds/s.csv': 'x\n1\n' }, 'target: DUCK\ndbt_project: {models_path: sql}\n');
  assert.deepEqual(files(await entries(half)), ['seeds/s.csv', 'sql/m.sql']);
  const none = duckProject({ 'x.sql': 'select 1' }, 'target: DUCK\ndbt_project: true\n');
  assert.deepEqual(await entries(none), []);
  const onlyModels = duckProject({ 'models/m.sql': 'select 1' }, 'target: DUCK\ndbt_project: true\n');
  assert.deepEqual(files(await entries(onlyModels)), ['models/m.sql']);
});

test('duplicate names (case-insensitive) are load errors with the exact texts', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ 'b/x.sql': 'select 1', 'a/x.sql': 'select 1' }, "duplicate model name 'x': found in both 'a/x.sql' and 'b/x.sql'"],
    [{ 'alpha/x.sql': 'select 1', 'Zeta/x.sql': 'select 1' }, "duplicate model name 'x': found in both 'Zeta/x.sql' and 'alpha/x.sql'"],
    [{ 'x.csv': 'a\n1\n', 'x.json': '[]' }, "duplicate seed name 'x': found in both 'x.csv' and 'x.json'"],
    [{ 'x.sql': 'select 1', 'seeds/x.csv': 'a\n1\n' }, "duplicate name 'x': found as both model and seed"],
  ];
  for (const [fs, message] of cases) {
    const dir = duckProject(fs);
    const r = await build('list', dir, '--json');
    assert.equal(r.code, 1, message);
    assert.equal(r.out, '');
    assert.equal(fatal(r), `could not load build project from ${dir}: ${message}`);
  }
  const cased = duckProject({ 'a/Orders.sql': 'select 1', 'b/orders.sql': 'select 1' });
  assert.match(fatal(await build('list', cased)), /: duplicate model name '(Orders|orders)': found in both 'a\/Orders\.sql' and 'b\/orders\.sql'$/);
});

test('the name is the file stem without its last extension; names keep their case', async () => {
  const dir = duckProject({ 'marts/core/fct_orders.sql': 'select 1', 'raw.v2.csv': 'a\n1\n', 'Mixed_Case.sql': 'select 1' });
  const list = await entries(dir);
  assert.deepEqual(
    list.map((e) => `${e.name}=${e.table}`).sort(),
    ['Mixed_Case=public.Mixed_Case', 'fct_orders=marts.fct_orders', 'raw.v2=public.raw.v2'],
  );
});
