/**
 * `service bench dag`: the ideal-schedule yardstick against hand-computed
 * makespans, the DAG shapes, strict option parsing, and real runs through the
 * supervisor and the Piscina pool (noop/sleep tasks and SQL on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { dagShape } from '../engine/bench/dag-shape.js';
import { criticalPath, idealMakespan } from '../engine/bench/ideal-schedule.js';
import { parseTaskKind } from '../engine/bench/task-kind.js';
import { helpText } from '../cli/command-help.js';
import { cli } from './helpers/build-cli.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const BENCH_DAG_HELP = helpText('bench dag');

const same = (n: number, d: number) => Array.from({ length: n }, () => d);

test('ideal makespan: chains, wide, diamond and a contended DAG match hand-computed schedules', () => {
  const chains = dagShape({ shape: 'chain', nodes: 64, width: 4 });
  assert.equal(idealMakespan(chains, same(64, 50), 4), 16 * 50);
  assert.equal(idealMakespan(chains, same(64, 50), 2), 32 * 50);
  const wide = dagShape({ shape: 'wide', nodes: 64 });
  assert.equal(idealMakespan(wide, same(64, 50), 4), 50 + 16 * 50); // 63 leaves on 4 slots: 16 rounds
  const diamond = dagShape({ shape: 'diamond', nodes: 64 });
  assert.equal(idealMakespan(diamond, same(64, 50), 4), 50 + 16 * 50 + 50); // 62 middles: 16 rounds
  assert.equal(criticalPath(diamond, same(64, 50)), 150);
  // a(10) → b(30), a → c(5), c → d(5); 1 slot runs everything in turn; 2 slots overlap b with c, d.
  const deps = [[], [0], [0], [2]];
  const dur = [10, 30, 5, 5];
  assert.equal(idealMakespan(deps, dur, 1), 50);
  assert.equal(idealMakespan(deps, dur, 2), 40);
  assert.equal(criticalPath(deps, dur), 40);
});

test('DAG shapes: sizes, edges, topological order, a reproducible random DAG', () => {
  assert.equal(dagShape({ shape: 'chain', nodes: 10 }).flat().length, 9);
  assert.equal(dagShape({ shape: 'chain', nodes: 64, width: 4 }).flat().length, 60);
  assert.equal(dagShape({ shape: 'wide', nodes: 64 }).flat().length, 63);
  assert.equal(dagShape({ shape: 'diamond', nodes: 64 }).flat().length, 62 + 62);
  const a = dagShape({ shape: 'random', nodes: 500, seed: 7, maxDeps: 4 });
  assert.deepEqual(a, dagShape({ shape: 'random', nodes: 500, seed: 7, maxDeps: 4 }));
  assert.notDeepEqual(a, dagShape({ shape: 'random', nodes: 500, seed: 8, maxDeps: 4 }));
  a.forEach((d, i) => {
    assert.ok(d.length <= 4);
    for (const p of d) assert.ok(p < i, `node ${i} depends on later node ${p}`);
  });
  assert.throws(() => dagShape({ shape: 'chain', nodes: 0 }), /--nodes must be a positive integer/);
});

test('task kinds parse; anything else is a usage error naming --task', () => {
  assert.deepEqual(parseTaskKind('noop'), { kind: 'noop' });
  assert.deepEqual(parseTaskKind('sleep:50'), { kind: 'sleep', ms: 50 });
  assert.deepEqual(parseTaskKind('cpu:2.5'), { kind: 'cpu', ms: 2.5 });
  assert.throws(() => parseTaskKind('sleep'), /--task must be noop, sleep:<ms>, cpu:<ms> or sql, got 'sleep'/);
});

test('--help documents every option; bad options exit 2 naming the flag', async () => {
  for (const flag of ['--shape', '--nodes', '--width', '--seed', '--max-deps', '--task', '--connection', '--sql', '--threads', '--no-micro', '--json', '--help']) {
    assert.ok(BENCH_DAG_HELP.includes(flag), `help lacks ${flag}`);
  }
  const help = await cli('bench', 'dag', '--help');
  assert.equal(help.code, 0);
  assert.match(help.out, /Usage: service bench dag/);
  assert.match(help.out, /Examples:/);
  const bad = await cli('bench', 'dag', '--shape', 'star');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: --shape must be one of chain, wide, diamond, random, got 'star'/);
  const unknown = await cli('bench', 'dag', '--bogus');
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /--bogus/);
  const threads = await cli('bench', 'dag', '--threads', '0');
  assert.equal(threads.code, 2);
  assert.match(threads.err, /--threads must be a positive integer, got '0'/);
  const sqlNoConn = await cli('bench', 'dag', '--task', 'sql');
  assert.equal(sqlNoConn.code, 2);
  assert.match(sqlNoConn.err, /--task sql needs --connection NAME/);
});

test('diamond of sleep tasks on the pool: every node runs on a worker, the report is complete', async () => {
  const r = await cli('bench', 'dag', '--shape', 'diamond', '--nodes', '24', '--task', 'sleep:20', '--threads', '4', '--json');
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out);
  assert.equal(report.shape, 'diamond');
  assert.equal(report.nodes, 24);
  assert.equal(report.edges, 44);
  assert.equal(report.task, 'sleep:20');
  assert.equal(report.failed, 0);
  assert.ok(report.threadsUsed >= 1 && report.threadsUsed <= report.workerThreads);
  // The measured schedule can never beat the ideal one of its own durations.
  assert.ok(report.wallMs >= report.idealMs * 0.999, `wall ${report.wallMs} < ideal ${report.idealMs}`);
  assert.ok(report.idealMs >= 3 * 20, 'three layers of 20 ms sleeps');
  assert.ok(report.efficiency > 0 && report.efficiency <= 1);
  for (const key of ['p50', 'p90', 'p99', 'max', 'mean']) assert.equal(typeof report.dispatchLatencyMs[key], 'number');
  assert.ok(report.poolRoundTripUs.samples > 0);
  assert.ok(report.poolRoundTripUs.p99 >= report.poolRoundTripUs.p50);
});

test('sql tasks run on PostgreSQL: one statement per node, a failing statement fails the run', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_bench_dag');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  process.env.BENCH_PG = db.url;
  try {
    await client.query('create table hits (at timestamptz default now())');
    const r = await cli('bench', 'dag', '--shape', 'chain', '--width', '3', '--nodes', '12', '--task', 'sql', '--connection', 'BENCH_PG', '--sql', 'insert into hits default values', '--threads', '3', '--no-micro', '--json');
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.failed, 0);
    assert.equal(report.poolRoundTripUs, null);
    const { rows } = await client.query('select count(*)::int as n from hits');
    assert.equal(rows[0].n, 12);
    const failing = await cli('bench', 'dag', '--shape', 'wide', '--nodes', '3', '--task', 'sql', '--connection', 'BENCH_PG', '--sql', 'select * from no_such_table', '--no-micro');
    assert.equal(failing.code, 1);
    assert.match(failing.err, /fatal: 1 of 3 nodes failed \(2 skipped\); first error: .*no_such_table/);
    const missing = await cli('bench', 'dag', '--task', 'sql', '--connection', 'NOPE_PG');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /fatal: connection 'NOPE_PG' not found/);
  } finally {
    delete process.env.BENCH_PG;
    await client.end();
    await db.drop();
  }
});
