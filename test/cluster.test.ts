/**
 * Cluster mode (issue 17): three daemon processes on loopback sharing one
 * fresh PostgreSQL state database per test, with a short lease
 * (SERVICE_LEASE_SECONDS) so takeovers happen in seconds. Needs
 * `npm run build` (the daemons are bin/service.js).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { requirePg } from './helpers/pg.js';
import { TestCluster, until } from './helpers/cluster.js';
import { responseChecker } from './helpers/openapi-check.js';

const LEASE_SECONDS = 2.5;
const TERMINAL = new Set(['success', 'warning', 'error', 'skipped', 'cancelled', 'interrupted']);

async function withCluster(t: import('node:test').TestContext, nodes: number, fn: (c: TestCluster) => Promise<void>, maxRunning = 4): Promise<void> {
  if (!(await requirePg(t))) return;
  const c = await TestCluster.create({ nodes, leaseSeconds: LEASE_SECONDS, maxRunning });
  try {
    await fn(c);
  } catch (err) {
    for (const [i, n] of c.nodes.entries()) t.diagnostic(`daemon ${i} log:\n${n.log.split('\n').slice(-30).join('\n')}`);
    throw err;
  } finally {
    await c.close();
  }
}

test('a file saved through daemon A is read through B, a job run through B uses it, and its output is read through C', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const [a, b, cc] = [c.api(0), c.api(1), c.api(2)];
    await c.sql('warehouse', 'create table seen (v text)');
    const saved = await a.post('/project/file/save', { file: { name: 'jobs/note.sql', body: "-- connection: WAREHOUSE\ninsert into seen values ('one') returning v\n" } });
    assert.ok(saved.default_job_id, JSON.stringify(saved));
    // Visible through B once its copy caught up (NOTIFY); the store is the source of truth.
    const read = await until(async () => {
      const f = await b.get('/project/file/get?name=jobs%2Fnote.sql').catch(() => undefined);
      return f?.body?.includes("'one'") ? f : undefined;
    }, 5000, 'the save through A to be readable through B');
    assert.match(read.body, /insert into seen values \('one'\)/);
    // Change it through A again and run it through B at once: the run brings B's copy up to date first.
    await a.post('/project/file/save', { file: { name: 'jobs/note.sql', body: "-- connection: WAREHOUSE\ninsert into seen values ('two') returning v\n" } });
    const { exec_id } = await b.post('/project/job/run', { job_id: saved.default_job_id });
    const done = await until(async () => {
      const e = await cc.exec(exec_id);
      return TERMINAL.has(e?.status) ? e : undefined;
    }, 20_000, 'the run through B to end');
    assert.equal(done.status, 'success', JSON.stringify(done));
    assert.deepEqual((await c.sql('warehouse', 'select v from seen')).map((r) => r.v), ['two']);
    assert.equal(typeof done.daemon, 'string', 'executions say which daemon ran them');
    const head = await c.sql('state', 'select version from project_trees where project_id = $1', [c.projectId]);
    assert.equal(done.tree_version, Number(head[0].version), 'the execution records the tree version it ran on');
    const check = responseChecker((await (await fetch(`${c.nodes[2]!.url}/openapi.json`)).json()) as Record<string, unknown>);
    check('GET', '/execution/list', 200, { executions: [done] });
    // Task output of an execution is readable through any daemon.
    const tasks = await cc.post('/execution/replication-tasks', { exec_id }).catch(() => undefined);
    if (tasks) assert.ok(tasks.tasks.length >= 1);
    // Deletes and renames travel too; each daemon's copy on disk ends up the same.
    await b.post('/project/file/rename', { old_name: 'jobs/note.sql', new_name: 'jobs/renamed.sql' });
    await b.post('/project/file/save', { file: { name: 'plain/readme.txt', body: 'hello' } });
    await b.post('/project/file/delete', { name: 'plain/readme.txt' });
    for (const i of [0, 2]) {
      const root = join(c.nodes[i]!.dataDir, 'projects', c.projectId, 'files');
      const read = (name: string): string | undefined => {
        try {
          return readFileSync(join(root, name), 'utf8');
        } catch {
          return undefined;
        }
      };
      await until(async () => (read('plain/readme.txt') === undefined && read('jobs/note.sql') === undefined && read('jobs/renamed.sql')?.includes("'two'") ? true : undefined), 5000, `node ${i}'s copy to follow B's rename and delete`);
    }
  });
});
