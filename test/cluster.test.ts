/**
 * Cluster mode: three daemon processes on loopback sharing one
 * fresh PostgreSQL state database per test, with a short lease
 * (SERVICE_LEASE_SECONDS) so takeovers happen in seconds. Needs
 * `npm run build` (the daemons are bin/service.js).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { main } from '../cli/main.js';
import { createGitRemote } from './helpers/git-remote.js';
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
    // A listing through C (its index built), then a new file through A: C's next listing has it.
    assert.deepEqual((await cc.post('/project/file/list', { prefix: 'jobs/' })).files.map((f: any) => f.name), ['jobs/note.sql']);
    await a.post('/project/file/save', { file: { name: 'jobs/other.txt', body: 'x' } });
    assert.deepEqual((await cc.post('/project/file/list', { prefix: 'jobs/' })).files.map((f: any) => f.name), ['jobs/note.sql', 'jobs/other.txt']);
    // Read through B right after A answered: B brings its copy up to the store's version first.
    const read = await b.get('/project/file/get?name=jobs%2Fnote.sql');
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
    // Task records and output of an execution are readable through any daemon.
    const tasks = (await cc.post('/execution/replication-tasks', { exec_id })).tasks as any[];
    assert.deepEqual(tasks.map((x) => x.status), ['success']);
    assert.deepEqual(tasks, (await c.api(0).post('/execution/replication-tasks', { exec_id })).tasks);
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

test('cancel through daemon B of an execution running on daemon A: cancelled, and its statement leaves pg_stat_activity within 1 s', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const saved = await c.api(0).post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n' } });
    for (let round = 0; round < 3; round++) {
      const { exec_id } = await c.api(round % 3).post('/project/job/run', { job_id: saved.default_job_id });
      await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 15_000, 'the query to run');
      const a = await c.nodeOf(exec_id);
      assert.ok(a >= 0, 'a daemon of the cluster claimed it');
      const b = (a + 1) % 3;
      const cancelled = await c.api(b).post('/execution/cancel', { exec_id });
      assert.deepEqual(cancelled, { exec_id, status: 'cancelled' });
      const sleeping = async () =>
        (await c.sql('warehouse', "select count(*)::int as n from pg_stat_activity where state = 'active' and query like '%pg_sleep(60)%' and pid <> pg_backend_pid()"))[0].n as number;
      await until(async () => ((await sleeping()) === 0 ? true : undefined), 1000, `round ${round}: the statement of ${exec_id} (on daemon ${a}, cancelled through ${b}) to leave pg_stat_activity`);
      assert.equal((await c.api(a).exec(exec_id)).status, 'cancelled');
    }
    // A cancel whose notification never arrives (written straight into the store here): the
    // daemon running it sees the record at its next heartbeat and stops the statement.
    const { exec_id } = await c.api(0).post('/project/job/run', { job_id: saved.default_job_id });
    await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 15_000, 'the query to run');
    await c.sql('state', "UPDATE executions SET status = 'cancelled', end_time = $2 WHERE exec_id = $1", [exec_id, new Date().toISOString()]);
    await until(async () => ((await c.backends(exec_id)) === 0 ? true : undefined), LEASE_SECONDS * 1000, 'the statement of an execution cancelled without a notification to stop');
  });
});

test('500 query-job executions submitted through random daemons: each runs exactly once, and the load spreads', { timeout: 240_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    await c.sql('warehouse', 'create table runs (n integer not null, job text not null)');
    const jobs: string[] = [];
    for (let j = 0; j < 10; j++) {
      const saved = await c.api(j % 3).post('/project/file/save', { file: { name: `q/q${j}.sql`, body: `-- connection: WAREHOUSE\ninsert into runs (n, job) values (\${N}, 'q${j}')\n` } });
      jobs.push(saved.default_job_id);
    }
    const TOTAL = 500;
    const submitted: string[] = [];
    let next = 0;
    // 24 clients at once, each request to a random daemon.
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        for (let n = next++; n < TOTAL; n = next++) {
          const daemon = Math.floor(Math.random() * 3);
          const { exec_id } = await c.api(daemon).post('/project/job/run', { job_id: jobs[n % jobs.length], vars: { N: n } });
          submitted.push(exec_id);
        }
      }),
    );
    assert.equal(new Set(submitted).size, TOTAL);
    await until(async () => ((await c.sql('state', "select count(*)::int as n from executions where status in ('queued', 'running')"))[0].n === 0 ? true : undefined), 200_000, 'every execution to end');
    const statuses = await c.sql('state', 'select status, count(*)::int as n from executions group by status');
    assert.deepEqual(statuses, [{ status: 'success', n: TOTAL }]);
    // Exactly once: every N inserted once, none missing.
    const runs = await c.sql('warehouse', 'select count(*)::int as rows, count(distinct n)::int as distinct_n, min(n) as lo, max(n) as hi from runs');
    assert.deepEqual(runs[0], { rows: TOTAL, distinct_n: TOTAL, lo: 0, hi: TOTAL - 1 });
    const attempts = await c.sql('state', 'select max(attempt)::int as most from executions');
    assert.equal(attempts[0].most, 1, 'no execution was claimed twice');
    const spread = await c.sql('state', 'select claimed_by, count(*)::int as n from executions group by claimed_by order by n desc');
    t.diagnostic(`executions per daemon: ${spread.map((r) => r.n).join(', ')}`);
    assert.equal(spread.length, 3, `every daemon ran some: ${JSON.stringify(spread)}`);
    for (const r of spread) assert.ok(r.n >= TOTAL / 10, `daemon ${r.claimed_by} ran only ${r.n} of ${TOTAL}`);
  });
});

test('kill -9 of the daemon running an execution, 10 times: a survivor marks it interrupted within the lease and a few seconds, its backend is gone, the other daemons\' executions go on', { timeout: 240_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const api = c.api(0);
    const slow = await api.post('/project/file/save', { file: { name: 'slow1.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n' } });
    const other = await api.post('/project/file/save', { file: { name: 'slow2.sql', body: '-- connection: WAREHOUSE\nselect 2 as x from pg_sleep(60)\n' } });
    let checkedBystander = 0;
    for (let round = 0; round < 10; round++) {
      const entry = c.nodes.findIndex((n) => n.child !== undefined);
      const victimExec = (await c.api(entry).post('/project/job/run', { job_id: slow.default_job_id })).exec_id as string;
      const bystander = (await c.api(entry).post('/project/job/run', { job_id: other.default_job_id })).exec_id as string;
      await until(async () => ((await c.backends(victimExec)) > 0 && (await c.backends(bystander)) > 0 ? true : undefined), 15_000, `round ${round}: both queries running`);
      const victim = await c.nodeOf(victimExec);
      assert.ok(victim >= 0);
      await c.kill(victim);
      const interrupted = await until(async () => {
        const e = (await c.sql('state', 'select status, error from executions where exec_id = $1', [victimExec]))[0];
        return e.status === 'interrupted' && (await c.backends(victimExec)) === 0 ? e : undefined;
      }, LEASE_SECONDS * 1000 + 5000, `round ${round}: execution ${victimExec} of killed daemon ${victim} interrupted by a survivor, backend gone`);
      assert.match(interrupted.error, /stopped heartbeating; taken over by daemon-/);
      const tasks = await c.sql('state', "select count(*)::int as n from tasks where exec_id = $1 and status in ('queued', 'running')", [victimExec]);
      assert.equal(tasks[0].n, 0, 'its open tasks ended with it');
      if ((await c.nodeOf(bystander)) >= 0) {
        // Running on a survivor: untouched by the takeover.
        const b = (await c.sql('state', 'select status from executions where exec_id = $1', [bystander]))[0];
        assert.equal(b.status, 'running', `round ${round}: the execution on a live daemon is not affected`);
        assert.equal(await c.backends(bystander), 1);
        checkedBystander++;
      }
      const entryNow = c.nodes.findIndex((n) => n.child !== undefined);
      await c.api(entryNow).post('/execution/cancel', { exec_id: bystander }).catch(() => undefined);
      await until(async () => ((await c.backends(bystander)) === 0 ? true : undefined), 15_000, 'the bystander to stop');
      await c.start(victim);
    }
    assert.ok(checkedBystander > 0, 'at least one round had the other execution on a survivor');
    const left = await c.sql('state', "select count(*)::int as n from executions where status in ('queued', 'running')");
    assert.equal(left[0].n, 0);
    const status = await c.sql('state', "select count(*) filter (where fenced_by is not null)::int as fenced, count(*) filter (where fenced_by is null and stopped is null)::int as live from daemons");
    assert.deepEqual(status[0], { fenced: 10, live: 3 });
  });
});

/** Saves a 60 s query job that allows one retry, runs it through daemon 0 and waits until its statement runs; its execution id. */
async function runningRetryableJob(c: TestCluster): Promise<string> {
  const api = c.api(0);
  const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n' } });
  const job = await api.get(`/project/job/get?job_id=${saved.default_job_id}`);
  await api.post('/project/job/save', { job: { ...pick(job), config: { ...job.config, retries: 1 } } });
  const { exec_id } = await api.post('/project/job/run', { job_id: saved.default_job_id });
  await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 15_000, 'the query to run');
  return exec_id as string;
}

test('a job that allows retries: the execution of a killed daemon is re-queued and run again by a survivor', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 2, async (c) => {
    await Promise.all([0, 1].map((i) => c.start(i)));
    const exec_id = await runningRetryableJob(c);
    const first = await c.nodeOf(exec_id);
    await c.kill(first);
    const survivor = 1 - first;
    const rerun = await until(async () => {
      const e = (await c.sql('state', 'select status, attempt, claimed_by from executions where exec_id = $1', [exec_id]))[0];
      return e.status === 'running' && e.attempt === 2 && (await c.backends(exec_id)) === 1 ? e : undefined;
    }, LEASE_SECONDS * 1000 + 8000, 're-queued and running again on the survivor');
    assert.equal(await c.nodeOf(exec_id), survivor, JSON.stringify(rerun));
    await c.api(survivor).post('/execution/cancel', { exec_id });
  });
});

/** A job as /project/job/save takes it (read-only fields dropped). */
function pick(job: Record<string, unknown>): Record<string, unknown> {
  const { created: _c, updated: _u, executed: _e, next_run: _n, default: _d, ...rest } = job;
  return rest;
}

test('a schedule every minute, daemons stopped, killed and started, clocks seconds apart: exactly one execution per due time (time compressed 30x)', { timeout: 120_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    // SERVICE_SCHEDULER_CLOCK runs each scheduler's clock 30x (a minute every 2 s) from one instant,
    // node 1 four seconds ahead and node 2 three seconds behind (in the compressed clock).
    const t0 = Date.now();
    const clock = (offset: number) => ({ SERVICE_SCHEDULER_CLOCK: `${t0}:30:${offset}` });
    const offsets = [0, 4000, -3000];
    await Promise.all([0, 1, 2].map((i) => c.start(i, clock(offsets[i]!))));
    await c.sql('warehouse', 'create table ticks (at timestamptz default now())');
    const api = c.api(0);
    const saved = await api.post('/project/file/save', { file: { name: 'tick.sql', body: '-- connection: WAREHOUSE\ninsert into ticks default values\n' } });
    const job = await api.get(`/project/job/get?job_id=${saved.default_job_id}`);
    await api.post('/project/job/save', { job: { ...pick(job), active: true, schedules: ['* * * * *'] } });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // About seven compressed minutes; one daemon at least runs throughout.
    await sleep(3000);
    await c.stop(1);
    await sleep(1500);
    await c.kill(2);
    await sleep(1500);
    await c.start(1, clock(offsets[1]!));
    await sleep(1500);
    await c.start(2, clock(offsets[2]!));
    await sleep(1500);
    await c.stop(0);
    await sleep(3000);
    await c.stop(1);
    await c.stop(2);
    const claims = await c.sql('state', 'select due_time, exec_id from schedule_claims where job_id = $1 order by due_time', [saved.default_job_id]);
    t.diagnostic(`due times fired: ${claims.length}`);
    assert.ok(claims.length >= 5, `at least five due times in about seven compressed minutes, got ${claims.length}`);
    for (let i = 1; i < claims.length; i++) {
      assert.equal(Date.parse(claims[i].due_time) - Date.parse(claims[i - 1].due_time), 60_000, `no due time lost between ${claims[i - 1].due_time} and ${claims[i].due_time}`);
    }
    assert.ok(claims.every((r) => r.exec_id !== null), 'every claimed due time became an execution');
    const execs = await c.sql('state', "select exec_id from executions where job_id = $1 and triggered_by = 'schedule' order by exec_id", [saved.default_job_id]);
    assert.deepEqual(execs.map((e) => e.exec_id).sort(), claims.map((r) => r.exec_id).sort(), 'one execution per due time, no more');
  });
});

test('a daemon paused past its lease (as in a network partition) is fenced: a survivor re-runs its execution, and on waking it writes nothing and exits 1', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 2, async (c) => {
    await Promise.all([0, 1].map((i) => c.start(i)));
    const exec_id = await runningRetryableJob(c);
    const paused = await c.nodeOf(exec_id);
    const survivor = 1 - paused;
    const pausedId = (await c.sql('state', 'select claimed_by from executions where exec_id = $1', [exec_id]))[0].claimed_by;
    c.nodes[paused]!.child!.kill('SIGSTOP');
    await until(async () => {
      const e = (await c.sql('state', 'select status, attempt from executions where exec_id = $1', [exec_id]))[0];
      return e.status === 'running' && e.attempt === 2 && (await c.backends(exec_id)) === 1 ? true : undefined;
    }, LEASE_SECONDS * 1000 + 8000, 'the survivor to re-run the execution');
    const secondOwner = (await c.sql('state', 'select claimed_by from executions where exec_id = $1', [exec_id]))[0].claimed_by;
    assert.notEqual(secondOwner, pausedId);
    c.nodes[paused]!.child!.kill('SIGCONT');
    const code = await c.nodes[paused]!.exited;
    c.nodes[paused]!.child = undefined;
    assert.equal(code, 1, 'a fenced daemon exits 1');
    assert.match(c.nodes[paused]!.log, /lost its lease .* and was taken over/);
    assert.doesNotMatch(c.nodes[paused]!.log, /triggerUncaughtException|Unhandled|^\s+at /m, 'it exits by its own shutdown, not by a crash');
    const e = (await c.sql('state', 'select status, attempt, claimed_by from executions where exec_id = $1', [exec_id]))[0];
    assert.deepEqual(e, { status: 'running', attempt: 2, claimed_by: secondOwner }, 'nothing the stale owner did reached the record');
    assert.equal(await c.backends(exec_id), 1, 'the second attempt still runs');
    await c.api(survivor).post('/execution/cancel', { exec_id });
  });
});

test('GET /cluster answers an operator token only, listing each daemon with heartbeat, running executions and version; service cluster status prints the same from the store', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 2, async (c) => {
    await Promise.all([0, 1].map((i) => c.start(i)));
    const saved = await c.api(0).post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n' } });
    const { exec_id } = await c.api(1).post('/project/job/run', { job_id: saved.default_job_id });
    await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 15_000, 'the query to run');
    const url = `${c.nodes[1]!.url}/cluster`;
    assert.equal((await fetch(url)).status, 401);
    const asProject = await fetch(url, { headers: { Authorization: `Service-Project-Token ${c.token}` } });
    assert.deepEqual([asProject.status, await asProject.json()], [401, { error: 'missing or invalid operator token', code: 'unauthorized' }]);
    const res = await fetch(url, { headers: { Authorization: `Service-Operator-Token ${c.operatorToken}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { daemon: string; daemons: any[] };
    const check = responseChecker((await (await fetch(`${c.nodes[1]!.url}/openapi.json`)).json()) as Record<string, unknown>);
    check('GET', '/cluster', 200, body);
    assert.equal(body.daemons.length, 2);
    assert.ok(body.daemons.every((d) => d.state === 'alive' && d.version === '0.1.0' && d.url?.startsWith('http://127.0.0.1:')));
    assert.ok(body.daemons.some((d) => d.id === body.daemon), 'the answering daemon is listed');
    const runner = body.daemons.find((d) => d.running.includes(exec_id));
    assert.ok(runner, 'the daemon running the execution lists it');
    assert.equal((await c.api(0).exec(exec_id)).daemon, runner.id, 'the execution names the same daemon');
    let out = '';
    let err = '';
    const io = { out: (s: string) => (out += s), err: (s: string) => (err += s) };
    assert.equal(await main(['cluster', 'status', '--state', c.stateUrl, '--json'], io), 0, err);
    const listed = JSON.parse(out) as { daemons: any[] };
    assert.deepEqual(listed.daemons.map((d) => [d.id, d.running]).sort(), body.daemons.map((d) => [d.id, d.running]).sort());
    out = '';
    assert.equal(await main(['cluster', 'status', '--state', c.stateUrl], io), 0);
    assert.match(out, /^DAEMON +STATE +HEARTBEAT AGE +RUNNING +MAX +VERSION +URL\n/);
    assert.equal(out.trim().split('\n').length, 3);
    err = '';
    assert.equal(await main(['cluster', 'status', '--state', '/tmp/some-state.db'], io), 2);
    assert.match(err, /^error: cluster commands need a PostgreSQL state store \(--state postgresql:\/\/…\): a SQLite store belongs to one daemon\n/);
    await c.api(0).post('/execution/cancel', { exec_id });
  });
});

test('the git poller runs on one daemon at a time, its pulls reach every daemon, and another daemon polls once that one is killed', { timeout: 90_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    const base = mkdtempSync(join(tmpdir(), 'svc-cluster-git-'));
    t.after(() => rmSync(base, { recursive: true, force: true }));
    const remote = await createGitRemote(base);
    await remote.commit({ 'from-git/one.txt': 'one\n' });
    const io = { out: () => {}, err: () => {} };
    assert.equal(await main(['project', 'update', 'acme', '--git-url', remote.url, '--git-poll', '1', '--state', c.stateUrl, '--data-dir', c.nodes[0]!.dataDir], io), 0);
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const everywhere = async (name: string, body: string, nodes: number[]) => {
      for (const i of nodes) {
        await until(async () => ((await c.api(i).get(`/project/file/get?name=${encodeURIComponent(name)}`).catch(() => undefined))?.body === body ? true : undefined), 20_000, `${name} through daemon ${i}`);
      }
    };
    await everywhere('from-git/one.txt', 'one\n', [0, 1, 2]);
    const pullers = () => c.nodes.map((n, i) => (/git pull of project \S+: [0-9a-f]{40}/.test(n.log) ? i : -1)).filter((i) => i >= 0);
    assert.equal(pullers().length, 1, `one daemon pulled: ${JSON.stringify(pullers())}`);
    const leader = pullers()[0]!;
    await c.kill(leader);
    const rest = [0, 1, 2].filter((i) => i !== leader);
    await remote.commit({ 'from-git/two.txt': 'two\n' });
    await everywhere('from-git/two.txt', 'two\n', rest);
    const next = rest.filter((i) => /git pull of project \S+: [0-9a-f]{40}/.test(c.nodes[i]!.log));
    assert.equal(next.length, 1, 'one of the survivors took the poller over');
  });
});

test('job policies hold across daemons: skip sees a run on another daemon, cancel stops it wherever it runs', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 3, async (c) => {
    await Promise.all([0, 1, 2].map((i) => c.start(i)));
    const api = c.api(0);
    const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n' } });
    const job = await api.get(`/project/job/get?job_id=${saved.default_job_id}`);
    await api.post('/project/job/save', { job: { ...pick(job), policy: 'skip' } });
    const first = (await c.api(0).post('/project/job/run', { job_id: job.id })).exec_id as string;
    await until(async () => ((await c.backends(first)) > 0 ? true : undefined), 15_000, 'the first run to start');
    const runner = await c.nodeOf(first);
    const elsewhere = (runner + 1) % 3;
    const skipped = (await c.api(elsewhere).post('/project/job/run', { job_id: job.id })).exec_id as string;
    const s = await c.api(elsewhere).exec(skipped);
    assert.equal(s.status, 'skipped');
    assert.match(s.error, new RegExp(`already has an active execution ${first}`));
    await api.post('/project/job/save', { job: { ...pick(job), policy: 'cancel' } });
    const newer = (await c.api(elsewhere).post('/project/job/run', { job_id: job.id })).exec_id as string;
    await until(async () => ((await c.backends(first)) === 0 && (await c.backends(newer)) === 1 ? true : undefined), 5000, 'the older run to stop on its daemon and the newer to run');
    const old = await c.api(runner).exec(first);
    assert.equal(old.status, 'cancelled');
    assert.match(old.error, new RegExp(`cancelled by a newer run ${newer}`));
    await c.api(runner).post('/execution/cancel', { exec_id: newer });
  });
});

/** Signs in to node `url`'s web console over plain HTTP (the form's CSRF double submit) and returns the session cookie. */
async function consoleSession(url: string, token: string): Promise<string> {
  const page = await fetch(`${url}/ui/sign-in`);
  const signInCookie = (page.headers.getSetCookie().find((c) => c.startsWith('service_signin=')) ?? '').split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  assert.ok(signInCookie && csrf, 'the sign-in form carries its CSRF secret');
  const res = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: signInCookie },
    body: new URLSearchParams({ _csrf: csrf, token, next: '/ui' }).toString(),
  });
  assert.equal(res.status, 303);
  const session = res.headers.getSetCookie().find((c) => c.startsWith('service_session='));
  assert.ok(session, 'signed in');
  return session.split(';')[0]!;
}

test('the web console of daemon B streams the live log of an execution running on daemon A', { timeout: 60_000 }, async (t) => {
  await withCluster(t, 2, async (c) => {
    await Promise.all([0, 1].map((i) => c.start(i)));
    const body = `-- connection: WAREHOUSE\n${Array.from({ length: 6 }, (_, i) => `select ${i} as step_${i}, pg_sleep(0.4);\n`).join('')}`;
    const saved = await c.api(0).post('/project/file/save', { file: { name: 'steps.sql', body } });
    const { exec_id } = await c.api(0).post('/project/job/run', { job_id: saved.default_job_id });
    await until(async () => ((await c.backends(exec_id)) > 0 ? true : undefined), 15_000, 'the query to run');
    const a = await c.nodeOf(exec_id);
    const b = 1 - a;
    const cookie = await consoleSession(c.nodes[b]!.url, c.token);
    const res = await fetch(`${c.nodes[b]!.url}/ui/executions/${exec_id}/events`, { headers: { cookie } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let chunksWhileRunning = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      // A chunk event that arrives before the end event came from the stored output of daemon A's run.
      if (!text.includes('event: end')) chunksWhileRunning = (text.match(/event: chunk/g) ?? []).length;
    }
    assert.ok(chunksWhileRunning > 0, `daemon ${b} sent live chunks of the execution running on daemon ${a}:\n${text}`);
    assert.match(text, /event: end\ndata: \{"status":"success"\}/);
    const shown = [...text.matchAll(/event: chunk\ndata: (.*)\n/g)].map((m) => (JSON.parse(m[1]!) as { text: string }).text).join('');
    for (let i = 0; i < 6; i++) assert.match(shown, new RegExp(`statement ${i + 1}/6`), `statement ${i + 1} is in the streamed log`);
  });
});
