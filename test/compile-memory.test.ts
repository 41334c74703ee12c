// The daemon's path: prepareBuild with the compile cache in memory keeps the
// project's loaded and compiled objects (engine/compile/compile-memo.ts) and,
// given a change journal (engine/files/change-journal.ts), looks only at the
// files that changed. Every recompile must equal a compile from scratch: an
// edited model (even one of the same size, written a moment ago), an edited
// macro, an added, moved or removed model, a model with new dependencies, a
// new folder and an env var are all seen, and only what depends on them is
// rendered again.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareBuild, type BuildRequest, type PreparedBuild } from '../engine/build-plan/prepare.js';
import { clearCompileCacheMemory } from '../engine/compile/compile-cache.js';
import { loadConnections } from '../engine/connections/index.js';
import { changeJournal, closeChangeJournals, type ChangeJournal } from '../engine/files/change-journal.js';
import { touchTree } from '../engine/files/tree-index.js';
import { duckProject, writeFiles } from './helpers/build-cli.js';

after(() => closeChangeJournals());

const FILES: Record<string, string> = {
  'helpers.macros.sql': '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n',
  'staging/orders.sql': "select 1 as id, {{ double('10') }} as amount, '{{ env_var('CM_REGION', 'eu') }}' as region\n",
  'staging/customers.sql': '/**\ntags: [daily]\n**/\nselect 1 as id, {{ limit_n }} as n\n',
  'marts/marts.macros.sql': '{% macro pick(c) %}{{ c }}{% endmacro %}\n',
  'marts/revenue.sql': "{{ config(tags=['finance']) }}\nselect o.id, {{ pick('o.amount') }} as amount from {{ ref('orders') }} o join @customers c on c.id = o.id\n",
  'marts/report.sql': 'select * from staging.orders o left join marts.late l on l.id = o.id\n',
  'marts/plain.sql': 'select 42 as answer\n',
};

interface Compiled {
  readonly p: PreparedBuild;
  /** Names the compile rendered (not from the cache), sorted; [] when all came from the cache. */
  readonly rendered: string[];
}

function prepare(dir: string, extra: Partial<BuildRequest> = {}): Compiled {
  const lines: string[] = [];
  const logger = { log: (_l: string, m: string) => void lines.push(m), enabled: () => true };
  const p = prepareBuild({ verb: 'compile', path: dir, select: [], exclude: [], connections: loadConnections({ projectEnvFile: join(dir, 'env.yaml'), env: {} }), ...extra }, logger);
  const line = lines.find((l) => l.startsWith('compile cache: '));
  assert.ok(line, `no compile cache line in ${lines.join('\n')}`);
  const m = /; rendered: (.*)$/.exec(line);
  return { p, rendered: m ? m[1]!.split(', ').sort() : [] };
}

/** Everything a compile result says, as plain data: nodes in order, their SQL, config and edges, and the graph. */
function shape(p: PreparedBuild): unknown {
  const nodes = p.compiled.nodes.map((n) => (n.kind === 'model' ? { name: n.name, table: n.source.naming.fullName, sql: n.sql, deps: n.dependencies, config: n.config, template: n.template } : { name: n.name, kind: n.kind }));
  const g = p.compiled.graph;
  return { nodes, graph: g.nodes, deps: [...g.deps].sort(), disabled: [...g.disabled].sort(), selected: p.selected.map((n) => n.name) };
}

/** The same project compiled from scratch (no cache). */
function fromScratch(dir: string, extra: Partial<BuildRequest> = {}): unknown {
  const logger = { log: () => {}, enabled: () => false };
  return shape(prepareBuild({ verb: 'compile', path: dir, select: [], exclude: [], connections: loadConnections({ projectEnvFile: join(dir, 'env.yaml'), env: {} }), compileCache: 'off', ...extra }, logger));
}

/** Waits until the journal reports `rel` changed after `mark` (its watcher is asynchronous). */
async function seen(j: ChangeJournal, mark: number, rel: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const changed = j.since(mark);
    if (changed === undefined || changed.includes(rel)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`the journal never reported ${rel}`);
}

/** Makes `change`, waits until the journal reports `rel`, and prepares again with the journal. */
async function afterChange(dir: string, j: ChangeJournal, rel: string, change: () => void): Promise<Compiled> {
  const mark = j.mark();
  change();
  await seen(j, mark, rel);
  return prepare(dir, { changes: j });
}

test('without a journal, a file edited between two prepares is seen — also one of the same size written a moment ago', () => {
  clearCompileCacheMemory();
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  assert.equal(prepare(dir).rendered.length, 5);
  assert.deepEqual(prepare(dir).rendered, []);
  writeFiles(dir, { 'marts/plain.sql': 'select 43 as answer\n' });
  let r = prepare(dir);
  assert.deepEqual(r.rendered, ['plain']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  // Same size, same second: the stamp of a file this new is never trusted.
  writeFiles(dir, { 'marts/plain.sql': 'select 44 as answer\n' });
  r = prepare(dir);
  assert.deepEqual(r.rendered, ['plain']);
  assert.match(JSON.stringify(shape(r.p)), /select 44 as answer/);
});

test('with a journal, only the files it reports are looked at: an edit is seen once reported, a write of the daemon at once', async () => {
  clearCompileCacheMemory();
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  const j = changeJournal(dir)!;
  assert.ok(j, 'the directory can be watched');
  const withJournal = { changes: j };
  prepare(dir, withJournal);
  assert.deepEqual(prepare(dir, withJournal).rendered, []);

  let r = await afterChange(dir, j, 'marts/plain.sql', () => writeFiles(dir, { 'marts/plain.sql': 'select 45 as answer\n' }));
  assert.deepEqual(r.rendered, ['plain']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  assert.deepEqual(prepare(dir, withJournal).rendered, []);

  // The daemon's own write (file save, git pull, cluster sync) is in the journal before the write returns.
  writeFileSync(join(dir, 'staging/customers.sql'), '/**\ntags: [daily]\n**/\nselect 2 as id, {{ limit_n }} as n\n');
  touchTree(dir, 'staging/customers.sql');
  r = prepare(dir, withJournal);
  assert.deepEqual(r.rendered, ['customers']);
  assert.deepEqual(shape(r.p), fromScratch(dir));

  // A model whose dependencies change: the DAG follows.
  r = await afterChange(dir, j, 'marts/plain.sql', () => writeFiles(dir, { 'marts/plain.sql': "select answer from {{ ref('revenue') }}\n" }));
  assert.deepEqual(r.rendered, ['plain']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  const names = r.p.compiled.nodes.map((n) => n.name);
  assert.ok(names.indexOf('plain') > names.indexOf('revenue'), `plain after revenue in ${names.join(', ')}`);
});

test('in memory, a changed macro re-renders every model that uses it, and only those', async () => {
  clearCompileCacheMemory();
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  const j = changeJournal(dir)!;
  prepare(dir, { changes: j });
  let r = await afterChange(dir, j, 'marts/marts.macros.sql', () => writeFiles(dir, { 'marts/marts.macros.sql': '{% macro pick(c) %}coalesce({{ c }}, 0){% endmacro %}\n' }));
  assert.deepEqual(r.rendered, ['plain', 'report', 'revenue']);
  assert.match(JSON.stringify(shape(r.p)), /coalesce\(o\.amount, 0\)/);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  r = await afterChange(dir, j, 'helpers.macros.sql', () => writeFiles(dir, { 'helpers.macros.sql': '{% macro double(col) %}({{ col }} * 3){% endmacro %}\n' }));
  assert.deepEqual(r.rendered, ['customers', 'orders', 'plain', 'report', 'revenue']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
});

test('in memory, adding, moving and removing models updates the DAG and re-renders the models that name them', async () => {
  clearCompileCacheMemory();
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  const j = changeJournal(dir)!;
  prepare(dir, { changes: j });

  // `marts.late` now exists: report's bare reference resolves to it.
  let r = await afterChange(dir, j, 'marts/late.sql', () => writeFiles(dir, { 'marts/late.sql': 'select 1 as id\n' }));
  assert.deepEqual(r.rendered, ['late', 'report']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  assert.ok(r.p.compiled.graph.deps.get('report')!.includes('late'));

  // A new folder with a model in it (the journal was not watching it: it looks at everything once).
  r = await afterChange(dir, j, 'extra', () => {
    mkdirSync(join(dir, 'extra'));
    writeFileSync(join(dir, 'extra/fresh.sql'), "select * from {{ ref('plain') }}\n");
  });
  assert.deepEqual(shape(r.p), fromScratch(dir));
  assert.ok(r.p.compiled.nodes.some((n) => n.name === 'fresh'));

  // customers moves to another folder (schema): revenue (@customers) renders again.
  r = await afterChange(dir, j, 'marts/customers.sql', () => renameSync(join(dir, 'staging/customers.sql'), join(dir, 'marts/customers.sql')));
  assert.deepEqual(r.rendered, ['customers', 'revenue']);
  assert.deepEqual(shape(r.p), fromScratch(dir));

  // Removing late: report renders again and loses the edge.
  r = await afterChange(dir, j, 'marts/late.sql', () => rmSync(join(dir, 'marts/late.sql')));
  assert.deepEqual(r.rendered, ['report']);
  assert.deepEqual(shape(r.p), fromScratch(dir));
  assert.ok(!r.p.compiled.graph.deps.get('report')!.includes('late'));
  assert.ok(!r.p.compiled.nodes.some((n) => n.name === 'late'));
});

test('in memory, a model reading an env var renders again when the step env changes it, and the others do not', () => {
  clearCompileCacheMemory();
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  prepare(dir, { stepEnv: { CM_REGION: 'us' } });
  assert.deepEqual(prepare(dir, { stepEnv: { CM_REGION: 'us' } }).rendered, []);
  const r = prepare(dir, { stepEnv: { CM_REGION: 'apac' } });
  assert.deepEqual(r.rendered, ['orders']);
  assert.match(JSON.stringify(shape(r.p)), /'apac' as region/);
  assert.deepEqual(shape(r.p), fromScratch(dir, { stepEnv: { CM_REGION: 'apac' } }));
});

test('the journal answers "look at everything" when it may have missed a change', () => {
  const dir = duckProject(FILES);
  const j = changeJournal(dir)!;
  const mark = j.mark();
  assert.deepEqual(j.since(mark), []);
  touchTree(dir, 'marts/plain.sql');
  assert.deepEqual(j.since(mark), ['marts/plain.sql']);
  // A directory written by the daemon: the files under it were never watched.
  mkdirSync(join(dir, 'newdir'));
  touchTree(dir, 'newdir');
  assert.equal(j.since(mark), undefined);
  const after = j.mark();
  touchTree(dir, 'newdir/a.sql');
  assert.deepEqual(j.since(after), ['newdir/a.sql']);
  // Hidden paths and node_modules are not the build's: never reported.
  touchTree(dir, '.service/compile-cache', 'node_modules/x/y.sql');
  assert.deepEqual(j.since(after), ['newdir/a.sql']);
});
