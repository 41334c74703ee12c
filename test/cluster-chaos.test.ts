/**
 * Lost PostgreSQL connections never take a daemon down (docs/cluster.md,
 * "Failure behaviour"). Two cluster-mode daemons on a PostgreSQL state store
 * and a PostgreSQL warehouse take saves and job runs for 30 s while, every
 * 2 s, an outside session terminates every backend of this test's two
 * databases (state store and warehouse; the pids are selected by database
 * first, no other session on the server is touched). Afterwards every daemon
 * process is alive and answers /health, every save that was answered 200
 * reads back intact through each daemon, and every execution whose run was
 * answered 200 is final (none left queued or running).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PG_ADMIN_URL, requirePg, tolerateTermination } from './helpers/pg.js';
import { TestCluster, until } from './helpers/cluster.js';

const LOAD_MS = 30_000;
const KILL_EVERY_MS = 2000;
const JOBS = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('every connection of two daemons terminated every 2 s for 30 s under saves and runs: daemons alive, saves intact, executions final', { timeout: 120_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const c = await TestCluster.create({ nodes: 2, leaseSeconds: 5, maxRunning: 4 });
  const killer = new pg.Client({ connectionString: PG_ADMIN_URL, application_name: 'service chaos test' });
  killer.on('error', () => {});
  const tally = { rounds: 0, terminated: 0, savesTried: 0, savesAcked: 0, runsTried: 0, runsAcked: 0 };
  try {
    await killer.connect();
    await Promise.all([c.start(0), c.start(1)]);
    const jobs: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const saved = await c.api(i % 2).post('/project/file/save', { file: { name: `jobs/q${i}.sql`, body: `-- connection: WAREHOUSE\nselect ${i} as x from pg_sleep(0.2)\n` } });
      jobs.push(saved.default_job_id);
    }
    const databases = [new URL(c.stateUrl).pathname.slice(1), c.warehouse.name];
    const acked = new Map<string, string>();
    const runs: string[] = [];
    const post = async (i: number, path: string, body: unknown) => {
      const res = await fetch(`${c.nodes[i]!.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Service-Project-Token ${c.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as any };
    };
    const end = Date.now() + LOAD_MS;
    const saver = async (w: number) => {
      for (let k = 0; Date.now() < end; k++) {
        const name = `data/w${w}-${k}.txt`;
        const body = `${name} ${'x'.repeat(1000 + k)}`;
        tally.savesTried++;
        const r = await post(k % 2, '/project/file/save', { file: { name, body } }).catch(() => undefined);
        if (r?.status === 200) acked.set(name, body);
      }
    };
    const runner = async () => {
      for (let k = 0; Date.now() < end; k++) {
        tally.runsTried++;
        const r = await post(k % 2, '/project/job/run', { job_id: jobs[k % JOBS] }).catch(() => undefined);
        if (r?.status === 200) runs.push(r.json.exec_id);
        await sleep(250);
      }
    };
    const chaos = async () => {
      while (Date.now() < end) {
        await sleep(KILL_EVERY_MS);
        // Our databases' sessions only: selected first, then exactly those terminated.
        const pids = (await killer.query('select pid from pg_stat_activity where datname = any($1::text[]) and pid <> pg_backend_pid()', [databases])).rows.map((r) => r.pid);
        if (pids.length > 0) await killer.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
        tally.rounds++;
        tally.terminated += pids.length;
      }
    };
    await Promise.all([saver(0), saver(1), runner(), chaos()]);
    tally.savesAcked = acked.size;
    tally.runsAcked = runs.length;

    for (let i = 0; i < 2; i++) assert.equal(c.nodes[i]!.child?.exitCode, null, `daemon ${i} exited:\n${c.nodes[i]!.log.slice(-4000)}`);
    const stuck = await until(async () => {
      const rows = await c.sql('state', "select exec_id, status from executions where exec_id = any($1::text[]) and status in ('queued', 'running')", [runs]);
      return rows.length === 0 ? rows : undefined;
    }, 30_000, 'every acknowledged run to end').catch(async () => c.sql('state', "select exec_id, status, claimed_by from executions where status in ('queued', 'running')"));
    assert.deepEqual(stuck, [], 'executions left queued or running');
    const statuses = await c.sql('state', 'select status, count(*)::int as n from executions where exec_id = any($1::text[]) group by status order by status', [runs]);
    assert.equal(statuses.reduce((a, r) => a + r.n, 0), runs.length, 'every acknowledged run has a record');
    for (let i = 0; i < 2; i++) {
      assert.equal(c.nodes[i]!.child?.exitCode, null, `daemon ${i} exited:\n${c.nodes[i]!.log.slice(-4000)}`);
      const health = await fetch(`${c.nodes[i]!.url}/health`);
      assert.equal(health.status, 200, `daemon ${i} /health`);
      await health.arrayBuffer();
      for (const [name, body] of acked) {
        const read = await c.api(i).get(`/project/file/get?name=${encodeURIComponent(name)}`);
        assert.equal(read.body, body, `daemon ${i}: acknowledged save ${name}`);
      }
    }
    assert.doesNotMatch(c.nodes[0]!.log + c.nodes[1]!.log, /Unhandled 'error' event|lost its lease/);
    t.diagnostic(`chaos: ${tally.rounds} rounds, ${tally.terminated} backends terminated; saves ${tally.savesAcked} acknowledged of ${tally.savesTried} tried, all intact on both daemons; runs ${tally.runsAcked} acknowledged of ${tally.runsTried} tried, all final (${statuses.map((r) => `${r.status} ${r.n}`).join(', ')}); 2 of 2 daemons alive`);
  } finally {
    await killer.end().catch(tolerateTermination);
    await c.close();
  }
});
