// Rendering on render worker threads (engine/compile/parallel-render.ts) gives
// what rendering on the main thread gives: the same compile output (text and
// --json), the same warnings in the same order, the same cache entries, and
// the same failure — the first failing model in project order, with its
// message naming the model and line — whichever thread rendered it.
// SERVICE_PARALLEL_RENDER=always makes every project take the parallel path
// with each thread rendering its own share (so the workers' share is theirs
// however late they start); =off renders everything on the main thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clearCompileCacheMemory } from '../engine/compile/compile-cache.js';
import { build, duckProject, fatal, logLines, withEnv, writeFiles, type CliResult } from './helpers/build-cli.js';

const MODELS = 40;

/** A project of MODELS models over 4 folders: refs, `@name`, bare prod names, macros per folder, vars, env vars, config() warnings. */
function files(): Record<string, string> {
  const f: Record<string, string> = {
    'helpers.macros.sql': '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n',
    'f2/f2.macros.sql': '{% macro pick(c) %}{{ c }}{% endmacro %}\n',
  };
  for (let i = 0; i < MODELS; i++) {
    const dir = `f${i % 4}`;
    const name = `m${String(i).padStart(2, '0')}`;
    const parent = i === 0 ? '' : `m${String(i - 1).padStart(2, '0')}`;
    const from = i === 0 ? '' : i % 3 === 0 ? ` from @${parent}` : i % 3 === 1 ? ` from {{ ref('${parent}') }}` : ` from f${(i - 1) % 4}.${parent}`;
    const head = i % 5 === 0 ? `{{ config(tags=['t${i % 3}'], colour='blue') }}\n` : i % 5 === 1 ? `/**\ntags: [daily]\n**/\n` : '';
    const pick = dir === 'f2' ? ", {{ pick('1') }} as p" : '';
    f[`${dir}/${name}.sql`] = `${head}select {{ double('${i}') }} as id, {{ limit_n }} as n, '{{ env_var('CP_REGION', 'eu') }}' as region${pick}${from}\n`;
  }
  return f;
}

async function compileWith(mode: 'off' | 'always', dir: string, ...extra: string[]): Promise<CliResult> {
  return withEnv({ SERVICE_PARALLEL_RENDER: mode }, () => build('compile', dir, ...extra));
}

/** stderr without timestamps (`--debug` prints the date too) and without the debug lines that differ by design (which thread rendered). */
const warnings = (err: string) =>
  logLines(err)
    .map((l) => l.replace(/^\d{4}-\d{2}-\d{2} [\d:.]+ /, ''))
    .filter((l) => !l.startsWith('DBG '));

test('the parallel path renders on worker threads and prints what the main thread alone prints, text and --json, warnings in order', async () => {
  await withEnv({ CP_REGION: 'us', SERVICE_COMPILE_CACHE: 'off' }, async () => {
    const dir = duckProject(files(), 'target: DUCK\nvars: {limit_n: 7}\n');
    for (const extra of [[], ['--json']]) {
      const here = await compileWith('off', dir, '--debug', ...extra);
      const there = await compileWith('always', dir, '--debug', ...extra);
      assert.equal(here.code, 0, here.err);
      assert.equal(there.code, 0, there.err);
      assert.equal(there.out, here.out);
      assert.deepEqual(warnings(there.err), warnings(here.err));
      assert.ok(warnings(here.err).some((l) => l.includes("model 'm05': unrecognized config key 'colour' (ignored)")), here.err);
      assert.ok(!here.err.includes('parallel render:'), here.err);
      // The workers' share rendered on another thread: the debug line counts it per thread id.
      const line = logLines(there.err).find((l) => l.includes('parallel render: '));
      assert.ok(line, there.err);
      const m = new RegExp(`parallel render: ${MODELS} models; this thread rendered (\\d+), worker thread (\\d+) (\\d+);`).exec(line);
      assert.ok(m, line);
      assert.ok(Number(m[3]) > 0 && Number(m[1]) + Number(m[3]) === MODELS, line);
      assert.notEqual(m[2], '0');
    }
    assert.match((await compileWith('always', dir)).out, /m39:\n {2}type: model[\s\S]*'us' as region/);
  });
});

test('models rendered on worker threads are cached like any other: the next compile renders nothing and prints the same', async () => {
  await withEnv({ CP_REGION: undefined }, async () => {
    const dir = duckProject(files(), 'target: DUCK\nvars: {limit_n: 7}\n');
    const first = await compileWith('always', dir, '--debug');
    assert.equal(first.code, 0, first.err);
    assert.ok(first.err.includes(`compile cache: 0 of ${MODELS} models from cache`), first.err);
    clearCompileCacheMemory();
    const again = await compileWith('off', dir, '--debug');
    assert.equal(again.code, 0, again.err);
    assert.ok(again.err.includes(`compile cache: ${MODELS} of ${MODELS} models from cache`), again.err);
    assert.equal(again.out, first.out);
    // An env var a worker's render read is checked like one read here.
    clearCompileCacheMemory();
    const changed = await withEnv({ CP_REGION: 'ap' }, () => compileWith('off', dir, '--debug'));
    assert.ok(changed.err.includes(`compile cache: 0 of ${MODELS} models from cache`), changed.err);
    assert.match(changed.out, /'ap' as region/);
  });
});

test('a failure on a worker thread is the same failure: the first failing model in project order, its message and exit code', async () => {
  const dir = duckProject(files(), 'target: DUCK\nvars: {limit_n: 7}\n');
  // Two broken models in the workers' share (the last ones): m36 fails first in project order.
  writeFiles(dir, {
    'f0/m36.sql': "select 1 as id\nfrom {{ ref('nope') }}\n",
    'f3/m39.sql': 'select {{ 1 + }} as id\n',
  });
  await withEnv({ SERVICE_COMPILE_CACHE: 'off' }, async () => {
    const here = await compileWith('off', dir);
    const there = await compileWith('always', dir);
    assert.equal(here.code, 1, here.err);
    assert.equal(there.code, here.code);
    assert.equal(fatal(there), fatal(here));
    assert.match(fatal(here), /^could not compile build project: could not compile models: could not compile template for model 'm36': ref\('nope'\) not found\./);
    assert.deepEqual(warnings(there.err), warnings(here.err));
  });
  // A template syntax error names the model and line on either thread.
  writeFiles(dir, { 'f0/m36.sql': 'select 1 as id\n' });
  const here = await compileWith('off', dir);
  const there = await compileWith('always', dir);
  assert.equal(there.code, here.code);
  assert.equal(fatal(there), fatal(here));
  assert.match(fatal(here), /template for model 'm39': .*\(line 1, column 15\)$/);
});
