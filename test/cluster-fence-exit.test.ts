/**
 * A fenced daemon shuts down in order (docs/cluster.md, "Leases and
 * fencing"): its lease is taken from it in the database while it runs an
 * execution; it logs one line saying it lost its lease, stops the
 * execution's statement, closes its HTTP server and exits with status 1 —
 * no uncaught exception, no stack trace, no error about refused writes. The
 * other daemon takes the execution over (`interrupted`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requirePg } from './helpers/pg.js';
import { TestCluster, until } from './helpers/cluster.js';

test('a daemon whose lease is taken in the database logs one line, stops its work and exits 1 without a stack trace', { timeout: 60_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const c = await TestCluster.create({ nodes: 2, leaseSeconds: 2 });
  try {
    await c.start(0);
    const api = c.api(0);
    const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(30)\n' } });
    const { exec_id } = await api.post('/project/job/run', { job_id: saved.default_job_id });
    await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 10_000, 'the statement to run');
    await c.start(1);
    const pid = c.nodes[0]!.child!.pid;
    const taken = await c.sql('state', "UPDATE daemons SET fenced_by = 'a test', fenced_at = clock_timestamp() WHERE pid = $1 AND fenced_by IS NULL RETURNING id", [pid]);
    assert.equal(taken.length, 1);

    const code = await c.nodes[0]!.exited;
    const log = c.nodes[0]!.log;
    assert.equal(code, 1, log);
    assert.equal(log.match(/lost its lease/g)?.length, 1, log);
    assert.doesNotMatch(log, /Error:|\n\s+at |writes are refused|Unhandled|uncaught/i, log);
    await assert.rejects(fetch(`${c.nodes[0]!.url}/health`), 'its HTTP server is closed');
    c.nodes[0]!.child = undefined;
    // Its statement is stopped and the survivor marks the execution interrupted.
    await until(async () => ((await c.backends(exec_id)) === 0 ? true : undefined), 10_000, 'the fenced daemon\'s statement to end');
    const e = await until(async () => {
      const x = await c.api(1).exec(exec_id);
      return x.status === 'running' ? undefined : x;
    }, 10_000, 'the survivor to take the execution over');
    assert.equal(e.status, 'interrupted', JSON.stringify(e));
  } finally {
    await c.close();
  }
});
