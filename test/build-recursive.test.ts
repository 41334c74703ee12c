// `-R` independent sub-projects for list and compile (spec build.md §17,
// §15.8, A24): JSON array payloads, text headers, flags applied to every
// child, load failures per child, the outside-files warning and the
// selector rule of §17 [ext].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { prepareSubProjects, type BuildRequest } from '../engine/build/prepare.js';
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

test('§15.8 text forms: a header per sub-project and a blank line after each', async () => {
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

test('§17 CLI flags apply to every child; each child keeps its own target', async () => {
  const dir = repo({ 'hr/service_build.yml': 'target: HRDB\n', 'hr/env.yaml': 'connections:\n  HRDB:\n    type: duckdb\n    instance: hr.duckdb\n' });
  const r = await build('list', dir, '-R', '--json', '--schema', 'dev_x');
  assert.equal(r.code, 0, r.err);
  const payload = json(r) as { target: string; nodes: { table: string }[] }[];
  assert.deepEqual(payload.map((p) => [p.target, p.nodes.map((n) => n.table)]), [
    ['HRDB', ['dev_x.people']],
    ['DUCK', ['dev_x.orders', 'dev_x.items']],
  ]);
});

test('§17 a child that fails to load fails list/compile with "could not compile sub-project <dir>: …", joined by "; "', async () => {
  const one = repo({ 'hr/service_build.yml': 'target: [oops\n' });
  const r = await build('list', one, '-R', '--json');
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(fatal(r), new RegExp(`^could not compile sub-project hr: could not load build project from ${join(one, 'hr')}: could not load service_build\\.yml: could not parse config file: `));
  const two = repo({ 'hr/service_build.yml': 'target: [oops\n', 'sales/bad.sql': 'select * from {{ ref("nope") }}' });
  const f = fatal(await build('compile', two, '-R'));
  assert.match(f, /^could not compile sub-project hr: .*; could not compile sub-project sales: could not compile build project: could not compile models: could not compile template for model 'bad': ref\('nope'\) not found\.$/s);
});

test('§17 without -R a config-less root is one flat project that skips the child projects', async () => {
  const dir = repo({ 'loose.sql': 'select 1', 'docs/notes.sql': 'select 2' });
  const r = await build('list', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual((json(r) as { file: string }[]).map((e) => e.file).sort(), ['docs/notes.sql', 'loose.sql']);
});

test('§17 only immediate, non-hidden children with a config file are sub-projects', () => {
  assert.deepEqual(findChildProjects(repo({ 'c/Service_Build.YAML': '' })), ['c', 'hr', 'sales']);
});

const request = (path: string, select: string[] = [], exclude: string[] = []): BuildRequest => ({ verb: 'list', path, select, exclude });

test('§17 prepareSubProjects: outside files warned about; a selector found in one child is not an error in another', () => {
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

const CLI_TODO = 'cli/build/command.ts prepares children one by one with prepareBuild; it should call prepareSubProjects (engine/build/prepare.ts)';

test('§17 CLI: the outside-files warning and the per-child selector rule', { todo: CLI_TODO }, async () => {
  const dir = repo({ 'loose.sql': 'select 1' });
  const r = await build('list', dir, '-R', '--json', '-s', 'items');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual((json(r) as { nodes: { name: string }[] }[]).map((p) => p.nodes.map((n) => n.name)), [[], ['items']]);
  assert.deepEqual(logLines(r.err), ['WRN ignoring 1 file(s) outside sub-projects']);
});
