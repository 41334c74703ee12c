/**
 * Where build tasks run: on PostgreSQL and on
 * DuckDB, every model, seed and data-test task of `service build run|test`
 * executes on a pool worker thread, never on the thread that hosts the
 * supervisor — `-d` names the worker's threadId per node — and a DuckDB file
 * is opened once per process, on its actor's own thread, while two projects
 * on it run at the same time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { duckdbActor } from '../actors/duckdb-actor.js';
import { duckdbOpenCount } from '../engine/targets/duckdb/instance-cache.js';
import { build, logLines, project } from './helpers/build-cli.js';
import { duckSql } from './helpers/duck-file.js';
import { pgWarehouse } from './helpers/warehouse.js';

const MODELS = {
  'seeds/colors.csv': 'id,name\n1,red\n2,blue\n',
  'a.sql': "/**\ntests:\n  - unique: id\n**/\nselect id, name from {{ ref('colors') }}",
  'b.sql': "/**\ntests:\n  - not_null: id\n**/\nselect id from {{ ref('a') }}",
  'v.sql': "/**\nmode: view\n**/\nselect count(*) as n from {{ ref('b') }}",
};

/** node → the thread id named by its `-d` line `build[<node>]: ran on worker thread <id>`. */
function threadsOf(err: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of logLines(err)) {
    const m = /build\[([^\]]+)\]: ran on worker thread (\d+)/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

function assertOnWorkers(err: string, nodes: readonly string[]): Map<string, number> {
  const threads = threadsOf(err);
  assert.deepEqual([...threads.keys()].sort(), [...nodes].sort(), `every node names its thread:\n${err}`);
  for (const [node, id] of threads) assert.notEqual(id, threadId, `${node} ran on the supervisor's thread`);
  return threads;
}

describe('PostgreSQL: tasks run on the worker pool', () => {
  const pgWh = pgWarehouse('run_threads');
  before(() => pgWh.setup());
  after(() => pgWh.close());

  it('models, the seed and their data tests (run), and the test tasks (test)', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const dir = pgWh.project(MODELS);
    const run = await build('run', dir, '-d', '--threads', '2');
    assert.equal(run.code, 0, run.err);
    assertOnWorkers(run.err, ['colors', 'a', 'b', 'v']);
    assert.deepEqual(await pgWh.query(dir, 'select n from public.v'), [{ n: '2' }]);
    const test = await build('test', dir, '-d');
    assert.equal(test.code, 0, test.err);
    assertOnWorkers(test.err, ['a', 'b', 'v']);
  });
});

describe('DuckDB: tasks run on the thread of the file\'s actor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-threads-'));
  const file = join(dir, 'shared.duckdb');
  const env = `connections:\n  DUCK:\n    type: duckdb\n    instance: ${file}\n`;
  after(async () => {
    await duckdbActor(file).close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('models, the seed and data tests run on the file\'s thread, not this one', async () => {
    const p = project({ 'service_build.yml': 'target: DUCK\n', 'env.yaml': env, ...MODELS });
    const run = await build('run', p, '-d');
    assert.equal(run.code, 0, run.err);
    const threads = assertOnWorkers(run.err, ['colors', 'a', 'b', 'v']);
    const { threadId: fileThread } = await duckdbActor(file).info();
    assert.deepEqual(new Set(threads.values()), new Set([fileThread]), 'all on the one thread of the file');
    const test = await build('test', p, '-d');
    assert.equal(test.code, 0, test.err);
    assertOnWorkers(test.err, ['a', 'b', 'v']);
  });

  it('two projects on one file at once: the file is opened once in this process, on its own thread', async () => {
    const one = project({ 'service_build.yml': 'target: DUCK\ndev:\n  schema: left_side\n', 'env.yaml': env, ...MODELS });
    const two = project({ 'service_build.yml': 'target: DUCK\ndev:\n  schema: right_side\n', 'env.yaml': env, ...MODELS });
    const [r1, r2] = await Promise.all([build('run', one, '-d'), build('run', two, '-d')]);
    assert.equal(r1.code, 0, r1.err);
    assert.equal(r2.code, 0, r2.err);
    const info = await duckdbActor(file).info();
    assert.equal(info.opens, 1, 'one instance of the file, ever, on its thread');
    assert.equal(duckdbOpenCount(file), 0, 'never opened on this thread');
    assert.deepEqual(new Set([...threadsOf(r1.err).values(), ...threadsOf(r2.err).values()]), new Set([info.threadId]));
    const rows = await duckSql<unknown[][]>(file, "select table_schema, count(*)::integer from information_schema.tables where table_schema in ('left_side', 'right_side') group by 1 order by 1", 'rows-js');
    assert.deepEqual(rows, [['left_side', 4], ['right_side', 4]], 'both projects wrote their four relations');
  });
});
