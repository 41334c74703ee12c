// The compile cache: real projects on disk compiled through `service build
// compile` in-process. A warm compile (from <build dir>/.service/, with this
// process's memory forgotten) prints byte-identical output to a cold one with
// the cache off; an edit to a model, a macro, a var, a config file, an env
// var or the set of models re-renders exactly the models that depend on it;
// a corrupt cache file is ignored and the output is the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareBuild } from '../engine/build-plan/prepare.js';
import { clearCompileCacheMemory } from '../engine/compile/compile-cache.js';
import { loadConnections } from '../engine/connections/index.js';
import { build, compiledNode, duckProject, logLines, withEnv, writeFiles } from './helpers/build-cli.js';

const FILES: Record<string, string> = {
  'helpers.macros.sql': '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n',
  'staging/orders.sql': "select 1 as id, {{ double('10') }} as amount, '{{ env_var('CC_REGION', 'eu') }}' as region\n",
  'staging/customers.sql': '/**\ntags: [daily]\n**/\nselect 1 as id, {{ limit_n }} as n\n',
  'marts/marts.macros.sql': '{% macro pick(c) %}{{ c }}{% endmacro %}\n',
  'marts/revenue.sql': "{{ config(tags=['finance']) }}\nselect o.id, {{ pick('o.amount') }} as amount from {{ ref('orders') }} o join @customers c on c.id = o.id\n",
  // A bare name that is no model (yet): the table-reference rewriting finds nothing.
  'marts/report.sql': 'select * from staging.orders o left join marts.late l on l.id = o.id\n',
  'marts/plain.sql': 'select 42 as answer\n',
};

/** The rendered models from the cache's point of view: `--debug` names what was rendered. */
async function compile(dir: string, ...extra: string[]): Promise<{ out: string; rendered: string[] | 'all-cached'; err: string }> {
  const r = await build('compile', dir, '--debug', ...extra);
  assert.equal(r.code, 0, r.err);
  const line = logLines(r.err).find((l) => l.includes('compile cache: '));
  assert.ok(line, `no compile cache line in:\n${r.err}`);
  const m = /compile cache: (\d+) of (\d+) models from cache(?:; rendered: (.*))?$/.exec(line);
  assert.ok(m, line);
  return { out: r.out, rendered: m[3] === undefined ? 'all-cached' : m[3].split(', ').sort(), err: r.err };
}

/** A compile with the cache off: the reference output. */
async function cold(dir: string, ...extra: string[]): Promise<string> {
  return withEnv({ SERVICE_COMPILE_CACHE: 'off' }, async () => {
    const r = await build('compile', dir, ...extra);
    assert.equal(r.code, 0, r.err);
    return r.out;
  });
}

/** The next compile reads the cache file, as a new process would. */
async function fresh(dir: string, ...extra: string[]) {
  clearCompileCacheMemory();
  return compile(dir, ...extra);
}

const ALL = Object.keys(FILES)
  .filter((f) => !f.endsWith('.macros.sql'))
  .map((f) => f.slice(f.lastIndexOf('/') + 1, -4))
  .sort();

test('warm compile from the cache file is byte-identical to a cold one, for text and --json output', async () => {
  await withEnv({ CC_REGION: undefined }, async () => {
    const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
    const reference = await cold(dir);
    assert.ok(!existsSync(join(dir, '.service')), 'cache off writes nothing');
    const first = await fresh(dir);
    assert.deepEqual(first.rendered, ALL);
    assert.equal(first.out, reference);
    assert.match(readFileSync(join(dir, '.service', '.gitignore'), 'utf8'), /^\*$/m);
    const warm = await fresh(dir);
    assert.equal(warm.rendered, 'all-cached');
    assert.equal(warm.out, reference);
    // In the same process (the daemon's case) the memory store serves it.
    const again = await compile(dir);
    assert.equal(again.rendered, 'all-cached');
    assert.equal(again.out, reference);
    const jsonRef = await cold(dir, '--json');
    const r = await build('compile', dir, '--json');
    assert.equal(r.out, jsonRef);
  });
});

test('an edit to a model, a macro, a var, a config file or an env var re-renders exactly what depends on it', async () => {
  await withEnv({ CC_REGION: undefined }, async () => {
    const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
    await fresh(dir);

    // One model's text: only that model.
    writeFiles(dir, { 'marts/plain.sql': 'select 43 as answer\n' });
    let r = await fresh(dir);
    assert.deepEqual(r.rendered, ['plain']);
    assert.match(r.out, /select 43 as answer/);
    assert.equal(r.out, await cold(dir));

    // A folder macro file: only the models in its scope (marts/).
    writeFiles(dir, { 'marts/marts.macros.sql': '{% macro pick(c) %}{{ c }}{% endmacro %}\n{% macro unused() %}x{% endmacro %}\n' });
    r = await fresh(dir);
    assert.deepEqual(r.rendered, ['plain', 'report', 'revenue']);
    // The root macro file: every model.
    writeFiles(dir, { 'helpers.macros.sql': '{% macro double(col) %}({{ col }} * 3){% endmacro %}\n' });
    r = await fresh(dir);
    assert.deepEqual(r.rendered, ALL);
    assert.match(r.out, /\(10 \* 3\) as amount/);
    assert.equal(r.out, await cold(dir));

    // A var in the config file, then the same var from --vars: every model (vars are project-wide).
    writeFileSync(join(dir, 'service_build.yml'), 'target: DUCK\nvars: {limit_n: 6}\n');
    r = await fresh(dir);
    assert.deepEqual(r.rendered, ALL);
    assert.match(r.out, /6 as n/);
    r = await fresh(dir, '--vars', '{limit_n: 7}');
    assert.deepEqual(r.rendered, ALL);
    assert.match(r.out, /7 as n/);
    assert.equal(r.out, await cold(dir, '--vars', '{limit_n: 7}'));

    // A config default (tags) changes every model's effective config.
    writeFileSync(join(dir, 'service_build.yml'), 'target: DUCK\nvars: {limit_n: 6}\ndefaults:\n  tags: [nightly]\n');
    r = await fresh(dir);
    assert.deepEqual(r.rendered, ALL);
    assert.equal(r.out, await cold(dir));
    r = await fresh(dir);
    assert.equal(r.rendered, 'all-cached');

    // --schema moves every node: everything renders again, and names follow.
    r = await fresh(dir, '--schema', 'dev_cc');
    assert.deepEqual(r.rendered, ALL);
    assert.match(r.out, /dev_cc\.orders/);
    assert.equal(r.out, await cold(dir, '--schema', 'dev_cc'));

    // env_var(): only the model that read it.
    await fresh(dir);
    await withEnv({ CC_REGION: 'us' }, async () => {
      r = await fresh(dir);
      assert.deepEqual(r.rendered, ['orders']);
      assert.match(r.out, /'us' as region/);
      assert.equal(r.out, await cold(dir));
    });
  });
});

test('adding, renaming or removing a model re-renders the models that named it, and nothing else', async () => {
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  await fresh(dir);
  // `marts.late` now exists: report's bare reference resolves (a dependency), nothing else changes.
  writeFiles(dir, { 'marts/late.sql': 'select 1 as id\n' });
  let r = await fresh(dir);
  assert.deepEqual(r.rendered, ['late', 'report']);
  const withLate = await cold(dir);
  assert.equal(r.out, withLate);
  const jr = await build('compile', dir, '--json');
  assert.match(JSON.stringify(compiledNode(jr, 'report')), /late/);

  // customers moves to another folder (schema): revenue (@customers) renders again; report never named it.
  renameSync(join(dir, 'staging/customers.sql'), join(dir, 'marts/customers.sql'));
  r = await fresh(dir);
  assert.deepEqual(r.rendered, ['customers', 'revenue']);
  assert.match(r.out, /join marts\.customers c/);
  assert.equal(r.out, await cold(dir));

  // Removing late: report renders again, its reference no longer resolves.
  renameSync(join(dir, 'marts/late.sql'), join(dir, 'marts/late.txt'));
  r = await fresh(dir);
  assert.deepEqual(r.rendered, ['report']);
  assert.equal(r.out, await cold(dir));
});

test('a corrupt, truncated or tampered cache file is ignored: a full compile with the same output', async () => {
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  const reference = await cold(dir);
  await fresh(dir);
  const file = join(dir, '.service', 'compile-cache');
  const good = readFileSync(file, 'utf8');
  const variants: [string, string][] = [
    ['truncated', good.slice(0, Math.floor(good.length / 2))],
    ['empty', ''],
    ['not json', 'garbage\n{{{'],
    // Valid JSON with the checksum of the original: the SQL was edited by hand.
    ['tampered', good.replace('select 42 as answer', 'select 666 as answer')],
    ['older format', good.replace(/^service-compile-cache 5 /, 'service-compile-cache 4 ')],
  ];
  for (const [what, text] of variants) {
    assert.notEqual(text, good, what);
    writeFileSync(file, text);
    const r = await fresh(dir);
    assert.deepEqual(r.rendered, ALL, what);
    assert.equal(r.out, reference, what);
    // ... and the file is whole again.
    const next = await fresh(dir);
    assert.equal(next.rendered, 'all-cached', what);
  }
});

test('a model that fails to render is never cached: its error comes back every time', async () => {
  const dir = duckProject({ ...FILES, 'marts/broken.sql': "select * from {{ ref('nope') }}\n" });
  for (let i = 0; i < 2; i++) {
    clearCompileCacheMemory();
    const r = await build('compile', dir);
    assert.equal(r.code, 1);
    assert.match(r.err, /ref\('nope'\) not found/);
  }
  // A warning from config() is repeated on a cached compile too.
  const w = duckProject({ 'a.sql': "{{ config(colour='red') }}\nselect 1\n" });
  const first = await build('compile', w);
  clearCompileCacheMemory();
  const second = await build('compile', w);
  assert.equal(second.code, first.code);
  const warn = (e: string) => logLines(e).filter((l) => l.startsWith('WRN'));
  assert.deepEqual(warn(second.err), warn(first.err));
});

test('files unchanged by their stat stamp come from the cache; an edit, even of the same size, is always seen', async () => {
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  // Files written in the last two seconds are never trusted by their stamp: let them age.
  await new Promise((r) => setTimeout(r, 2100));
  const reference = await cold(dir);
  await fresh(dir);
  const file = join(dir, '.service', 'compile-cache');
  const text = readFileSync(file, 'utf8');
  assert.ok((JSON.parse(text.split('\n')[1]!) as { sp: string[] }).sp.includes('marts/plain.sql'), 'plain.sql is in the cache with its stamp');
  assert.equal((await fresh(dir)).out, reference);
  // Same size, new text, written just now: read again, never the cached body.
  writeFiles(dir, { 'marts/plain.sql': 'select 24 as answer\n' });
  const r = await fresh(dir);
  assert.deepEqual(r.rendered, ['plain']);
  assert.match(r.out, /select 24 as answer/);
  assert.equal(r.out, await cold(dir));
  // Once it has aged, it is cached by its stamp; a later edit that ages past the window before the next
  // compile has a new stamp, which does not match the cached one.
  await new Promise((res) => setTimeout(res, 2100));
  assert.equal((await fresh(dir)).rendered, 'all-cached');
  writeFiles(dir, { 'marts/plain.sql': 'select 25 as answer\n' });
  await new Promise((res) => setTimeout(res, 2100));
  const aged = await fresh(dir);
  assert.deepEqual(aged.rendered, ['plain']);
  assert.match(aged.out, /select 25 as answer/);
});

test("the daemon's path (prepareBuild, memory cache by default) keeps the project in memory, re-renders only the changed file and writes nothing into the project", async () => {
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  const lines: string[] = [];
  const logger = { log: (_l: string, m: string) => void lines.push(m), enabled: () => true };
  const prepare = () => {
    lines.length = 0;
    const p = prepareBuild({ verb: 'compile', path: dir, select: [], exclude: [], connections: loadConnections({ projectEnvFile: join(dir, 'env.yaml'), env: {} }) }, logger);
    return { sql: p.compiled.nodes.map((n) => (n.kind === 'model' ? n.sql : '')).join('\n'), line: lines.find((l) => l.startsWith('compile cache: ')) };
  };
  clearCompileCacheMemory();
  const first = prepare();
  assert.match(first.line!, /^compile cache: 0 of 5 models from cache; rendered: /);
  assert.equal(prepare().line, 'compile cache: 5 of 5 models from cache');
  writeFiles(dir, { 'marts/plain.sql': 'select 44 as answer\n' });
  const edited = prepare();
  assert.equal(edited.line, 'compile cache: 4 of 5 models from cache; rendered: plain');
  assert.match(edited.sql, /select 44 as answer/);
  assert.ok(!existsSync(join(dir, '.service')), 'nothing written into the project');
});

test('the walk is taken from the cache only while every folder keeps its stamp: a model added, removed or put in a new folder is always seen', async () => {
  const dir = duckProject(FILES, 'target: DUCK\nvars: {limit_n: 5}\n');
  // Folders changed in the last two seconds are never trusted by their stamp: let them age.
  await new Promise((r) => setTimeout(r, 2100));
  const reference = await cold(dir);
  await fresh(dir);
  const warm = await fresh(dir);
  assert.equal(warm.rendered, 'all-cached');
  assert.equal(warm.out, reference);
  // A model added to an existing folder changes that folder's times.
  writeFiles(dir, { 'marts/late.sql': 'select 1 as id\n' });
  let r = await fresh(dir);
  assert.deepEqual(r.rendered, ['late', 'report']);
  assert.equal(r.out, await cold(dir));
  // ... and once everything has aged again, a removal and a model in a new folder.
  await new Promise((res) => setTimeout(res, 2100));
  await fresh(dir);
  renameSync(join(dir, 'marts/late.sql'), join(dir, 'marts/late.txt'));
  writeFiles(dir, { 'extra/deeper/fresh.sql': "select * from {{ ref('plain') }}\n" });
  r = await fresh(dir);
  assert.deepEqual(r.rendered, ['fresh', 'report']);
  assert.equal(r.out, await cold(dir));
  await new Promise((res) => setTimeout(res, 2100));
  await fresh(dir);
  // A model in a folder that already existed but was empty of models, two levels down.
  writeFiles(dir, { 'extra/deeper/second.sql': 'select 2 as id\n' });
  r = await fresh(dir);
  assert.deepEqual(r.rendered, ['second']);
  assert.equal(r.out, await cold(dir));
});
