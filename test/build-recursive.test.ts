// `-R` independent sub-projects for list and compile (A24): JSON array payloads, text headers, flags applied to every
// child, load failures per child, the outside-files warning and the
// selector rule [ext].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { prepareSubProjects, type BuildRequest } from '../engine/build-plan/prepare.js';
import { memoryLogger } from '../engine/log.js';
import { findChildProjects } from '../engine/project/discover.js';
import { errorChain } from '../engine/errors.js';
import { build, fatal, json, logLines, project, DUCK_ENV } from './helpers/build-cli.js';

/** The A24 layout: a config-less root with `hr` and `sales` sub-projects. */
function repo(extra: Record<string, string> = {}): string {
  return project({
    'sales/service_build.yml': 'target: DUCK\n',
    'sales/env.yaml': DUCK_ENV,
    'sales/orders.sql': 'select 1 as id',
    'sales/items.sql': "select * from {{ ref('orders') }}",
    'hr/service_build.yml': 'target: DUCK\n',
    'hr/env.yaml': DUCK_ENV,
    'hr/people.sql': 'select * from missing_people',
    '.hidden/service_build.yml': 'target: DUCK\n',
    '.hidden/h.sql': 'select 1',
    'node_modules/service_build.yml': '',
    'a/b/service_build.yml': '',
    'a/b/deep.sql': 'select 1',
    ...extra,
  });
}

test('A24 list -R --json: one {path, target, nodes} per child, ordered by directory name', async () => {
  const dir = repo();
  const r = await build('list', dir, '-R', '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const hr = '{"name":"people","type":"full-refresh","table":"public.people","file":"people.sql"}';
  const orders = '{"name":"orders","type":"full-refresh","table":"public.orders","file":"orders.sql"}';
  const items = '{"name":"items","type":"full-refresh","table":"public.items","file":"items.sql"}';
  assert.equal(r.out, `[{"path":"${join(dir, 'hr')}","target":"DUCK","nodes":[${hr}]},{"path":"${join(dir, 'sales')}","target":"DUCK","nodes":[${orders},${items}]}]\n`);
});

test('A24 compile -R --json: one {path, target, order, nodes, compiled} per child', async () => {
  const dir = repo();
  const r = await build('compile', dir, '--recursive', '--json');
  assert.equal(r.code, 0, r.err);
  const payload = json(r) as Record<string, unknown>[];
  assert.deepEqual(payload.map((p) => Object.keys(p)), [['path', 'target', 'order', 'nodes', 'compiled'], ['path', 'target', 'order', 'nodes', 'compiled']]);
  assert.deepEqual(payload.map((p) => [p.path, p.target, p.order, p.compiled]), [
    [join(dir, 'hr'), 'DUCK', ['people'], true],
    [join(dir, 'sales'), 'DUCK', ['orders', 'items'], true],
  ]);
  const items = (payload[1]!.nodes as Record<string, unknown>[])[1]!;
  assert.equal(items.sql, 'select * from public.orders');
  assert.deepEqual(items.dependencies, ['orders']);
});

test('text forms: a header per sub-project and a blank line after each', async () => {
  const dir = repo();
  const list = await build('list', dir, '-R');
  assert.equal(list.code, 0, list.err);
  assert.equal(list.out, [
    '=== Sub-project: hr (target: DUCK) ===',
    'people   public.people   (full-refresh)',
    '',
    '=== Sub-project: sales (target: DUCK) ===',
    'orders   public.orders   (full-refresh)',
    'items    public.items    (full-refresh)',
    '',
    '',
  ].join('\n'));
  const compile = await build('compile', dir, '-R', '-s', 'people*');
  assert.equal(compile.code, 0, compile.err);
  assert.ok(compile.out.startsWith('# === Sub-project: hr (target: DUCK) ===\nDAG Execution Order:\n  people (full-refresh)\n\npeople:\n'), compile.out);
  assert.ok(compile.out.endsWith('\n\n# === Sub-project: sales (target: DUCK) ===\n# No models selected.\n\n'), compile.out);
});

test('CLI flags apply to every child; each child keeps its own target', async () => {
  const dir = repo({ 'hr/service_build.yml': 'target: HRDB\n', 'hr/env.yaml': 'connections:\n  HRDB:\n    type: duckdb\n    instance: hr.duckdb\n' });
  const r = await build('list', dir, '-R', '--json', '--schema', 'dev_x');
  assert.equal(r.code, 0, r.err);
  const payload = json(r) as { target: string; nodes: { table: string }[] }[];
  assert.deepEqual(payload.map((p) => [p.target, p.nodes.map((n) => n.table)]), [
    ['HRDB', ['dev_x.people']],
    ['DUCK', ['dev_x.orders', 'dev_x.items']],
  ]);
});

test('a child that fails to load fails list/compile with "could not compile sub-project <dir>: …", joined by "; "', async () => {
  const one = repo({ 'hr/service_build.yml': 'target: [oops\n' });
  const r = await build('list', one, '-R', '--json');
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(fatal(r), new RegExp(`^could not compile sub-project hr: could not load build project from ${join(one, 'hr')}: could not load service_build\\.yml: could not parse config file: `));
  const two = repo({ 'hr/service_build.yml': 'target: [oops\n', 'sales/bad.sql': 'select * from {{ ref("nope") }}' });
  const f = fatal(await build('compile', two, '-R'));
  assert.match(f, /^could not compile sub-project hr: .*; could not compile sub-project sales: could not compile build project: could not compile models: could not compile template for model 'bad': ref\('nope'\) not found\.$/s);
});

test('without -R a config-less root is one flat project that skips the child projects', async () => {
  const dir = repo({ 'loose.sql': 'select 1', 'docs/notes.sql': 'select 2' });
  const r = await build('list', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual((json(r) as { file: string }[]).map((e) => e.file).sort(), ['docs/notes.sql', 'loose.sql']);
});

test('only immediate, non-hidden children with a config file are sub-projects', () => {
  assert.deepEqual(findChildProjects(repo({ 'c/Service_Build.YAML': '' })), ['c', 'hr', 'sales']);
});

const request = (path: string, select: string[] = [], exclude: string[] = []): BuildRequest => ({ verb: 'list', path, select, exclude });

test('prepareSubProjects: outside files warned about; a selector found in one child is not an error in another', () => {
  const dir = repo({ 'loose.sql': 'select 1', 'docs/notes.sql': 'select 2', 'seed.csv': 'a\n1\n' });
  const logger = memoryLogger('info');
  const results = prepareSubProjects(request(dir, ['items']), dir, ['hr', 'sales'], logger);
  assert.deepEqual(logger.lines, [{ level: 'warn', message: 'ignoring 3 file(s) outside sub-projects' }]);
  assert.deepEqual(results.map((r) => [r.dir, r.error === undefined ? 'ok' : errorChain(r.error), r.prepared?.selected.map((n) => n.name)]), [
    ['hr', 'ok', []],
    ['sales', 'ok', ['items']],
  ]);
  // Items that resolve somewhere are kept where they resolve and dropped elsewhere; excludes too.
  const mixed = prepareSubProjects(request(dir, ['people', 'orders+'], ['items']), dir, ['hr', 'sales'], memoryLogger());
  assert.deepEqual(mixed.map((r) => r.prepared?.selected.map((n) => n.name)), [['people'], ['orders']]);
  // Resolving nowhere is the usual error, in every child.
  const nowhere = prepareSubProjects(request(dir, ['nope']), dir, ['hr', 'sales'], memoryLogger());
  assert.deepEqual(nowhere.map((r) => errorChain(r.error)), [
    "could not compile build project: could not apply selectors: selector 'nope' not found.",
    "could not compile build project: could not apply selectors: selector 'nope' not found.",
  ]);
});


test('CLI: the outside-files warning and the per-child selector rule', async () => {
  const dir = repo({ 'loose.sql': 'select 1' });
  const r = await build('list', dir, '-R', '--json', '-s', 'items');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual((json(r) as { nodes: { name: string }[] }[]).map((p) => p.nodes.map((n) => n.name)), [[], ['items']]);
  assert.deepEqual(logLines(r.err), ['WRN ignoring 1 file(s) outside sub-projects']);
});

/** Merged mode: a root with its own config and two child projects. */
function merged(extra: Record<string, string> = {}): string {
  return project({
    'service_build.yml': 'target: DUCK\nvars: {region: eu, nested: {a: 1, b: 2}}\ndefaults: {tags: [root], mode: view, hooks: {start: [{type: log, message: root}]}}\n',
    'env.yaml': DUCK_ENV,
    'top.sql': "select '{{ region }}' as r, {{ nested.b }} as b",
    'sales/service_build.yml': 'target: OTHER\ndev: {schema: nope}\nvars: {region: us, nested: {b: 3}}\ndefaults: {tags: [sales, root], mode: table, hooks: {start: [{type: log, message: child}]}}\n',
    'sales/orders.sql': "select '{{ region }}' as r, {{ nested.a }} as a, {{ nested.b }} as b, '{{ var(\"region\") }}' as v from {{ ref('top') }}",
    'hr/service_build.yml': '',
    'hr/people.sql': 'select * from sales.orders',
    'hr/deeper/service_build.yml': '',
    'hr/deeper/x.sql': 'select 1',
    ...extra,
  });
}

test('merged mode: children join one DAG; config merged per child; naming unchanged', async () => {
  const dir = merged();
  const list = await build('list', dir, '-R', '--json');
  assert.equal(list.code, 0, list.err);
  assert.deepEqual(json(list), [
    { name: 'top', type: 'view', table: 'public.top', file: 'top.sql' },
    { name: 'orders', type: 'full-refresh', table: 'sales.orders', file: 'sales/orders.sql' },
    { name: 'people', type: 'view', table: 'hr.people', file: 'hr/people.sql' },
  ]);
  const c = await build('compile', dir, '-R', '--json');
  assert.equal(c.code, 0, c.err);
  const node = (n: string) => (json(c) as { nodes: Record<string, unknown>[] }).nodes.find((x) => x.name === n)!;
  assert.equal(node('top').sql, "select 'eu' as r, 2 as b");
  assert.equal(node('orders').sql, "select 'us' as r, 1 as a, 3 as b, 'us' as v from public.top");
  assert.deepEqual(node('orders').tags, ['root', 'sales']);
  assert.deepEqual(node('people').dependencies, ['orders']);
  const text = await build('compile', dir, '-R', '-s', 'orders');
  assert.match(text.out, /\n {2}start_hooks:\n {4}- \{"type":"log","message":"root"\}\n {4}- \{"type":"log","message":"child"\}\n/);
  // --vars replaces top-level keys everywhere.
  const v = await build('compile', dir, '-R', '--json', '--vars', '{"region": "ap"}', '-s', 'orders');
  assert.match((json(v) as { nodes: { sql: string }[] }).nodes[0]!.sql, /^select 'ap' as r, 1 as a, 3 as b, 'ap' as v /);
  // Without -R the child projects are skipped.
  assert.deepEqual((json(await build('list', dir, '--json')) as { name: string }[]).map((e) => e.name), ['top']);
  // The child's target, dev and dbt_project have no effect (a DEBUG line says so).
  const d = await build('list', dir, '-R', '-d');
  assert.match(d.err, /DBG sales\/service_build\.yml: target, dev of a merged sub-project have no effect\n/);
});

test('merged mode: a child config error names the child file', async () => {
  const bad = merged({ 'sales/service_build.yml': 'vars: [oops\n' });
  const r = await build('list', bad, '-R');
  assert.equal(r.code, 1);
  assert.match(fatal(r), new RegExp(`^could not load build project from ${bad}: could not load sales/service_build\\.yml: could not parse config file: `));
  const unset = merged({ 'sales/service_build.yml': 'vars: {k: "${SVC_T_CHILD_UNSET}"}\n' });
  const u = await build('list', unset, '-R');
  assert.equal(u.code, 1);
  assert.ok(fatal(u).endsWith('sales/service_build.yml: vars.k uses ${SVC_T_CHILD_UNSET} but SVC_T_CHILD_UNSET is not set.\nSet it in ~/.service/env.yaml under `env:` or export it in the shell.'), u.err);
  assert.equal((await build('list', unset, '-R', '--vars', '{"k": 1}')).code, 0);
});
