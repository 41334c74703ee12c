/**
 * Suite "cluster" — several daemons on one PostgreSQL state store.
 *
 * Throughput: trivial query jobs (`insert … values (${N})`, 10 jobs so ten
 * can run at once) submitted by 24 concurrent clients, each request to a
 * random daemon, timed from the first submission until every execution has
 * ended; with 1, 2 and 3 daemons (PostgreSQL state, --max-running 4 each).
 * Baseline: one daemon with the embedded SQLite state store, same jobs and
 * load, measured in the same run. Ratio = baseline executions/s ÷ ours.
 *
 * Takeover: the daemon running a `pg_sleep(60)` query is killed with
 * SIGKILL; timed until a survivor has marked the execution interrupted and
 * its backend is gone. Lease 3 s (SERVICE_LEASE_SECONDS); the baseline is the
 * lease itself, the least any takeover can take.
 *
 * Propagation: a file saved through daemon A, timed until daemon B serves the
 * new content (polled every 5 ms); baseline: the save's own round trip.
 * Remote cancel: a running `pg_sleep(60)` cancelled through another daemon,
 * timed until the statement leaves pg_stat_activity; baseline: the same
 * cancel through the daemon that runs it.
 */
import { rmSync } from 'node:fs';
import { daemonFixture, startDaemonChild } from '../../test/helpers/daemon-child.js';
import { TestCluster } from '../../test/helpers/cluster.js';
import { createTempDatabase } from '../../test/helpers/pg.js';
import pg from 'pg';
import { median, ms, rate, type Row } from '../lib/report.js';
import type { SuiteContext } from '../lib/suite-context.js';

const JOBS = 10;
const CLIENTS = 24;
const LEASE_SECONDS = 3;

type Post = (daemon: number, path: string, body: unknown) => Promise<any>;

async function waitIdle(count: () => Promise<number>): Promise<void> {
  while ((await count()) > 0) await new Promise((r) => setTimeout(r, 20));
}

/** Submits `total` runs over the jobs through random daemons; resolves with executions/s once all ended. */
async function drive(daemons: number, total: number, post: Post, active: () => Promise<number>): Promise<number> {
  const jobs: string[] = [];
  for (let j = 0; j < JOBS; j++) {
    jobs.push((await post(j % daemons, '/project/file/save', { file: { name: `q/q${j}.sql`, body: `-- connection: WAREHOUSE\ninsert into runs (n) values (\${N})\n` } })).default_job_id);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let n = next++; n < total; n = next++) await post(Math.floor(Math.random() * daemons), '/project/job/run', { job_id: jobs[n % JOBS], vars: { N: n } });
    }),
  );
  await waitIdle(active);
  return total / ((performance.now() - started) / 1000);
}

async function sqliteBaseline(total: number): Promise<number> {
  const wh = await createTempDatabase('bench_cluster_wh');
  const admin = new pg.Client({ connectionString: wh.url });
  await admin.connect();
  await admin.query('create table runs (n integer)');
  const { dataDir, token } = await daemonFixture(wh.url);
  const d = await startDaemonChild(dataDir, ['--max-running', '4']);
  try {
    const headers = { Authorization: `Service-Project-Token ${token}`, 'Content-Type': 'application/json' };
    const post: Post = async (_i, path, body) => (await fetch(d.url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json();
    const active = async () => {
      const page = (await (await fetch(`${d.url}/execution/list?limit=100&filters=${encodeURIComponent(JSON.stringify({ status: 'queued' }))}`, { headers })).json()) as any;
      const running = (await (await fetch(`${d.url}/execution/list?limit=100&filters=${encodeURIComponent(JSON.stringify({ status: 'running' }))}`, { headers })).json()) as any;
      return page.executions.length + running.executions.length;
    };
    return await drive(1, total, post, active);
  } finally {
    d.child.kill('SIGKILL');
    await d.exited;
    await admin.end();
    await wh.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function clusterThroughput(daemons: number, total: number): Promise<number> {
  const c = await TestCluster.create({ nodes: daemons, leaseSeconds: 15 });
  try {
    await Promise.all(c.nodes.map((_, i) => c.start(i)));
    await c.sql('warehouse', 'create table runs (n integer)');
    const post: Post = (i, path, body) => c.api(i).post(path, body);
    const active = async () => (await c.sql('state', "select count(*)::int as n from executions where status in ('queued', 'running')"))[0].n as number;
    return await drive(daemons, total, post, active);
  } finally {
    await c.close();
  }
}

interface Latencies {
  readonly takeover: number[];
  readonly saveRoundTrip: number[];
  readonly propagation: number[];
  readonly cancelLocal: number[];
  readonly cancelRemote: number[];
}


async function latencies(rounds: number): Promise<Latencies> {
  const c = await TestCluster.create({ nodes: 3, leaseSeconds: LEASE_SECONDS });
  const out: Latencies = { takeover: [], saveRoundTrip: [], propagation: [], cancelLocal: [], cancelRemote: [] };
  try {
    await Promise.all(c.nodes.map((_, i) => c.start(i)));
    const saved = await c.api(0).post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 from pg_sleep(60)\n' } });
    for (let r = 0; r < rounds * 4; r++) {
      const t0 = performance.now();
      await c.api(0).post('/project/file/save', { file: { name: 'p.txt', body: `round ${r}` } });
      out.saveRoundTrip.push(performance.now() - t0);
      while ((await c.api(1).get('/project/file/get?name=p.txt').catch(() => undefined))?.body !== `round ${r}`) await new Promise((res) => setTimeout(res, 5));
      out.propagation.push(performance.now() - t0);
    }
    const sleeping = async () => (await c.sql('warehouse', "select count(*)::int as n from pg_stat_activity where state = 'active' and query like '%pg_sleep(60)%' and pid <> pg_backend_pid()"))[0].n as number;
    for (let r = 0; r < rounds * 2; r++) {
      const { exec_id } = await c.api(0).post('/project/job/run', { job_id: saved.default_job_id });
      while ((await c.backends(exec_id)) === 0) await new Promise((res) => setTimeout(res, 20));
      const runner = await c.nodeOf(exec_id);
      const through = r % 2 === 0 ? runner : (runner + 1) % 3;
      const t0 = performance.now();
      await c.api(through).post('/execution/cancel', { exec_id });
      while ((await sleeping()) > 0) await new Promise((res) => setTimeout(res, 5));
      (through === runner ? out.cancelLocal : out.cancelRemote).push(performance.now() - t0);
    }
    for (let r = 0; r < rounds; r++) {
      const live = c.nodes.findIndex((n) => n.child);
      const { exec_id } = await c.api(live).post('/project/job/run', { job_id: saved.default_job_id });
      while ((await c.backends(exec_id)) === 0) await new Promise((res) => setTimeout(res, 20));
      const victim = await c.nodeOf(exec_id);
      const t0 = performance.now();
      await c.kill(victim);
      for (;;) {
        const s = (await c.sql('state', 'select status from executions where exec_id = $1', [exec_id]))[0].status;
        if (s === 'interrupted' && (await c.backends(exec_id)) === 0) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      out.takeover.push(performance.now() - t0);
      await c.start(victim);
    }
    return out;
  } finally {
    await c.close();
  }
}

export async function clusterSuite(ctx: SuiteContext): Promise<Row[]> {
  const total = ctx.quick ? 150 : 600;
  ctx.progress(`cluster: baseline, one SQLite daemon, ${total} executions`);
  const base = await sqliteBaseline(total);
  const rows: Row[] = [];
  for (const n of [1, 2, 3]) {
    ctx.progress(`cluster: ${n} daemon(s) on PostgreSQL, ${total} executions`);
    const ours = await clusterThroughput(n, total);
    rows.push({
      id: `cluster.throughput.${n}`,
      label: `trivial query executions/s, ${n} daemon(s) sharing PostgreSQL`,
      ours: rate(ours, 'exec'),
      baseline: `${rate(base, 'exec')} (1 daemon, SQLite)`,
      ratio: base / ours,
      data: { executionsPerSecond: ours, baselinePerSecond: base, executions: total, daemons: n, clients: CLIENTS, jobs: JOBS },
    });
  }
  const rounds = ctx.quick ? 2 : 5;
  ctx.progress(`cluster: takeover after kill -9, ${rounds} rounds, lease ${LEASE_SECONDS} s`);
  const l = await latencies(rounds);
  rows.push({
    id: 'cluster.takeover',
    label: `takeover after kill -9 (interrupted by a survivor, backend gone), median of ${rounds}`,
    ours: ms(median(l.takeover)),
    baseline: `${LEASE_SECONDS} s lease`,
    ratio: median(l.takeover) / (LEASE_SECONDS * 1000),
    data: { takeoverMs: l.takeover, leaseMs: LEASE_SECONDS * 1000 },
  });
  rows.push({
    id: 'cluster.file-propagation',
    label: `file saved through A until B serves it, median of ${l.propagation.length}`,
    ours: ms(median(l.propagation)),
    baseline: `${ms(median(l.saveRoundTrip))} (the save's round trip)`,
    ratio: median(l.propagation) / median(l.saveRoundTrip),
    data: { propagationMs: l.propagation, saveRoundTripMs: l.saveRoundTrip },
  });
  rows.push({
    id: 'cluster.cancel-remote',
    label: `cancel through another daemon until the statement is gone, median of ${l.cancelRemote.length}`,
    ours: ms(median(l.cancelRemote)),
    baseline: `${ms(median(l.cancelLocal))} (through the daemon running it)`,
    ratio: median(l.cancelRemote) / median(l.cancelLocal),
    data: { cancelRemoteMs: l.cancelRemote, cancelLocalMs: l.cancelLocal },
  });
  return rows;
}

/** `node --import tsx bench/suites/cluster.ts [total | latency]`: parts of this suite alone, printed. */
if (import.meta.url === `file://${process.argv[1]}`) {
  void (async () => {
    if (process.argv[2] === 'latency') {
      console.log(JSON.stringify(await latencies(2)));
      return;
    }
    const total = Number(process.argv[2] ?? 150);
    const base = await sqliteBaseline(total);
    console.log(`sqlite 1 daemon: ${base.toFixed(1)} exec/s`);
    for (const n of [1, 3]) console.log(`${n} daemon(s): ${(await clusterThroughput(n, total)).toFixed(1)} exec/s`);
  })();
}
