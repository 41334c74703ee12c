/**
 * Restart recovery touches only the sessions of its own interrupted
 * executions (docs/daemon.md, "What recovery cleans up"). Six executions —
 * three pg_sleep queries and three replications with staging tables — run
 * in the warehouse when the daemon is killed with SIGKILL. Two bystander
 * sessions stay open across the restart on another database: one with an
 * unrelated application_name, one wearing the session tag of an interrupted
 * execution (recovery must look in the warehouse's database only). After the
 * restart both bystanders answer, and the interrupted executions' backends
 * and staging tables are gone.
 *
 * With the terminate call inside the WHERE clause beside the tag filter,
 * PostgreSQL 15 plans `pg_terminate_backend(pid)` first once three or more
 * tags are given (EXPLAIN shows it first in the filter), so it would end the
 * bystanders — and every other session on the server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { daemonFixture, projectClient, startDaemonChild, until, type DaemonChild } from './helpers/daemon-child.js';
import { createTempDatabase, requirePg, tolerateTermination } from './helpers/pg.js';

const QUERIES = 3;
const REPLICATIONS = 3;

async function openSession(url: string, applicationName: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: applicationName });
  // A lost bystander is what this test looks for: it shows up as a failed `SELECT 1`, not a crash.
  c.on('error', () => {});
  await c.connect();
  return c;
}

test(`restart recovery after kill -9 with ${QUERIES + REPLICATIONS} running executions terminates only their sessions`, { timeout: 120_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const warehouse = await createTempDatabase('svc_bystander_wh');
  const other = await createTempDatabase('svc_bystander_other');
  const admin = await openSession(warehouse.url, 'service test admin');
  const sessions: pg.Client[] = [admin];
  let daemon: DaemonChild | undefined;
  try {
    await admin.query('create schema tgt');
    const { dataDir, token } = await daemonFixture(warehouse.url);
    daemon = await startDaemonChild(dataDir, ['--max-running', String(QUERIES + REPLICATIONS)]);
    const api = projectClient(daemon.url, token);
    const jobs: string[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const saved = await api.post('/project/file/save', { file: { name: `slow${i}.sql`, body: `-- connection: WAREHOUSE\nselect ${i} as x from pg_sleep(60);\n` } });
      jobs.push(saved.default_job_id);
    }
    for (let i = 0; i < REPLICATIONS; i++) {
      const body = `source: WAREHOUSE\ntarget: WAREHOUSE\nstreams:\n  slow${i}:\n    sql: "select g as id, pg_sleep(0.05)::text as z from generate_series(1, 2000) g"\n    object: tgt.slow${i}\n`;
      const saved = await api.post('/project/file/save', { file: { name: `replications/slow${i}.yaml`, body } });
      jobs.push(saved.default_job_id);
    }
    assert.ok(jobs.every(Boolean), JSON.stringify(jobs));
    const running: string[] = [];
    for (const job of jobs) running.push((await api.post('/project/job/run', { job_id: job })).exec_id as string);
    await until(async () => {
      const r = await admin.query(
        "select (select count(*) from pg_stat_activity where datname = current_database() and application_name like 'service exec %' and state = 'active')::int as busy, (select count(*) from pg_class where relname like '\\_service\\_tmp\\_%')::int as tmp",
      );
      return r.rows[0].busy >= QUERIES + REPLICATIONS && r.rows[0].tmp >= REPLICATIONS ? true : undefined;
    }, 'every execution busy in the warehouse');

    const bystander = await openSession(other.url, 'bystander of the recovery test');
    const lookalike = await openSession(other.url, `service exec ${running[0]}`);
    sessions.push(bystander, lookalike);

    daemon.child.kill('SIGKILL');
    await daemon.exited;
    daemon = await startDaemonChild(dataDir, ['--max-running', String(QUERIES + REPLICATIONS)]);
    const after = projectClient(daemon.url, token);
    for (const id of running) assert.equal((await after.exec(id)).status, 'interrupted', id);

    assert.deepEqual((await bystander.query('select 1 as one')).rows, [{ one: 1 }], 'the bystander on another database survives');
    assert.deepEqual((await lookalike.query('select 1 as one')).rows, [{ one: 1 }], 'a session of another database with the same tag survives');
    const backends = await admin.query("select application_name from pg_stat_activity where datname = current_database() and application_name like 'service exec %'");
    assert.deepEqual(backends.rows, [], 'backends of interrupted executions are gone');
    const tables = await admin.query("select relname from pg_class where relname like '\\_service\\_tmp\\_%'");
    assert.deepEqual(tables.rows, [], 'staging tables of interrupted executions are dropped');
    const terminated = /recovery: terminated (\d+) database session\(s\)/.exec(daemon.log());
    assert.ok(terminated && Number(terminated[1]) >= QUERIES + REPLICATIONS, daemon.log());
  } finally {
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    for (const s of sessions) await s.end().catch(tolerateTermination);
    await warehouse.drop();
    await other.drop();
  }
});
