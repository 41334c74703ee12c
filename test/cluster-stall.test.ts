/**
 * A stall of the state database fences nobody (docs/cluster.md, "Leases and
 * fencing"). Three daemons with a 2 s lease; an outside session holds
 * `LOCK TABLE executions IN ACCESS EXCLUSIVE MODE` for 3 leases while an
 * execution runs and more runs are requested through every daemon (takeovers, claims and the execution's own writes wait on
 * it; heartbeats must not), then `LOCK TABLE daemons` as long (every
 * renewal fails: no daemon may judge another for that time). Afterwards no
 * daemon is fenced, every process is alive, and the execution ends normally.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { requirePg, tolerateTermination } from './helpers/pg.js';
import { TestCluster, until } from './helpers/cluster.js';

const LEASE_S = 2;
const HOLD_MS = LEASE_S * 1000 * 3;

async function holdLock(url: string, table: string, ms: number): Promise<void> {
  const c = new pg.Client({ connectionString: url, application_name: 'service stall test' });
  c.on('error', () => {});
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    await new Promise((r) => setTimeout(r, ms));
    await c.query('COMMIT');
  } finally {
    await c.end().catch(tolerateTermination);
  }
}

test(`the executions table, then the daemons table, locked from outside for ${HOLD_MS / 1000} s each (lease ${LEASE_S} s): no daemon is fenced`, { timeout: 90_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const c = await TestCluster.create({ nodes: 3, leaseSeconds: LEASE_S });
  try {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const api = c.api(0);
    const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(2)\n' } });
    const { exec_id } = await api.post('/project/job/run', { job_id: saved.default_job_id });
    await until(async () => ((await api.exec(exec_id))?.status === 'running' ? true : undefined), 10_000, 'the execution to start');
    // Let every daemon renew a few times, so each has been renewing for longer than a lease.
    await new Promise((r) => setTimeout(r, LEASE_S * 1000 * 1.5));

    const more: string[] = [];
    for (let i = 0; i < 6; i++) {
      const s = await api.post('/project/file/save', { file: { name: `more${i}.sql`, body: `-- connection: WAREHOUSE\nselect ${i} as x from pg_sleep(0.5)\n` } });
      more.push(s.default_job_id);
    }
    const locked = holdLock(c.stateUrl, 'executions', HOLD_MS);
    await new Promise((r) => setTimeout(r, 300));
    // Requests that wait on the lock with the daemons' own work: they are answered once it is released.
    const requested = more.map((job, i) => c.api(i % 3).post('/project/job/run', { job_id: job }).then((r) => r.exec_id as string));
    await locked;
    const ids = await Promise.all(requested);
    await holdLock(c.stateUrl, 'daemons', HOLD_MS);
    // Two leases of renewals and takeover checks after the stall.
    await new Promise((r) => setTimeout(r, LEASE_S * 1000 * 2));

    const fenced = await c.sql('state', 'SELECT id, fenced_by FROM daemons WHERE fenced_by IS NOT NULL');
    assert.deepEqual(fenced, [], `daemons fenced for a stall of the database:\n${c.nodes.map((n) => n.log.slice(-3000)).join('\n----\n')}`);
    for (let i = 0; i < 3; i++) {
      assert.equal(c.nodes[i]!.child?.exitCode, null, `daemon ${i} exited:\n${c.nodes[i]!.log.slice(-3000)}`);
      assert.doesNotMatch(c.nodes[i]!.log, /lost its lease|stopped heartbeating: taking over/, `daemon ${i}`);
    }
    const done = await until(async () => {
      const e = await api.exec(exec_id);
      return e.status === 'running' ? undefined : e;
    }, 20_000, 'the execution to end');
    assert.equal(done.status, 'success', JSON.stringify(done));
    for (const id of ids) {
      const e = await until(async () => {
        const x = await api.exec(id);
        return x.status === 'running' || x.status === 'queued' ? undefined : x;
      }, 20_000, `execution ${id} to end`);
      assert.equal(e.status, 'success', JSON.stringify(e));
    }
  } finally {
    await c.close();
  }
});
