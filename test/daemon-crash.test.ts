/**
 * Crash test: a real daemon process is killed with
 * SIGKILL ten times while it saves files and runs PostgreSQL query and
 * replication jobs. After every restart: every acknowledged save is intact,
 * no execution is left running, no `_service_tmp_*` table and no backend of
 * an interrupted execution remains, and no `.service-tmp-*` staging file is
 * left in the data directory.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { daemonFixture, projectClient, startDaemonChild, until, type DaemonChild } from './helpers/daemon-child.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const KILLS = 10;

function stagingFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => p.split('/').some((s) => s.startsWith('.service-tmp-')));
}

test(`${KILLS} × kill -9 while saving and running PostgreSQL jobs: nothing acknowledged lost, nothing left behind`, { timeout: 240_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_crash_loop');
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  let daemon: DaemonChild | undefined;
  const tally = { kills: 0, acknowledgedSaves: 0, interrupted: 0, leftTablesSeen: 0, failures: 0 };
  try {
    await admin.query('create schema tgt');
    const { dataDir, token, projectId } = await daemonFixture(db.url);
    const files = join(dataDir, 'projects', projectId, 'files');
    const acknowledged = new Map<string, string>();
    daemon = await startDaemonChild(dataDir);
    let api = projectClient(daemon.url, token);
    const query = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60);\n' } });
    const repl = await api.post('/project/file/save', {
      file: { name: 'replications/slow.yaml', body: 'source: WAREHOUSE\ntarget: WAREHOUSE\nstreams:\n  slow:\n    sql: "select g as id, pg_sleep(0.05)::text as z from generate_series(1, 2000) g"\n    object: tgt.slow\n' },
    });
    assert.ok(query.default_job_id && repl.default_job_id, JSON.stringify([query, repl]));

    for (let round = 0; round < KILLS; round++) {
      const running = [
        (await api.post('/project/job/run', { job_id: query.default_job_id })).exec_id as string,
        (await api.post('/project/job/run', { job_id: repl.default_job_id })).exec_id as string,
      ];
      // Both jobs in the database: the query's backend is busy and the replication's temp table exists.
      await until(async () => {
        const r = await admin.query(
          "select (select count(*) from pg_stat_activity where datname = current_database() and application_name like 'service exec %' and state = 'active')::int as busy, (select count(*) from pg_class where relname like '\\_service\\_tmp\\_%')::int as tmp",
        );
        return r.rows[0].busy >= 2 && r.rows[0].tmp >= 1 ? true : undefined;
      }, `round ${round}: both jobs running`);
      // Saves in flight when the kill lands; those answered 200 must survive it.
      let stop = false;
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let k = 0; !stop; k++) {
          const name = `data/r${round}/w${w}-${k}.txt`;
          const body = `${name}\n${'x'.repeat(50_000 + k)}`;
          try {
            const res = await fetch(`${daemon!.url}/project/file/save`, {
              method: 'POST',
              headers: { Authorization: `Service-Project-Token ${token}`, 'Content-Type': 'application/json' },
              body: JSON.stringify({ file: { name, body } }),
            });
            if (res.status === 200) acknowledged.set(name, body);
          } catch {
            return; // the daemon died under this request
          }
        }
      });
      await new Promise((r) => setTimeout(r, 150 + round * 20));
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      stop = true;
      await Promise.all(writers);
      tally.kills++;

      daemon = await startDaemonChild(dataDir);
      api = projectClient(daemon.url, token);
      for (const id of running) {
        const e = await api.exec(id);
        assert.equal(e.status, 'interrupted', `round ${round}: ${id} ${JSON.stringify(e)}`);
        tally.interrupted++;
      }
      const stillRunning = await fetch(`${daemon.url}/execution/list?filters=${encodeURIComponent(JSON.stringify({ status: 'running' }))}`, { headers: { Authorization: `Service-Project-Token ${token}` } });
      assert.deepEqual(((await stillRunning.json()) as { executions: unknown[] }).executions, [], `round ${round}: executions left running`);
      const leftovers = await admin.query("select relname from pg_class where relname like '\\_service\\_tmp\\_%'");
      assert.deepEqual(leftovers.rows, [], `round ${round}: temp tables left`);
      // Other tests run beside this one: only this database's sessions count.
      const backends = await admin.query("select application_name, query from pg_stat_activity where datname = current_database() and application_name like 'service exec %'");
      assert.deepEqual(backends.rows, [], `round ${round}: backends of interrupted executions still there`);
      assert.deepEqual(stagingFiles(join(dataDir, 'projects')), [], `round ${round}: staging files left`);
      for (const [name, body] of acknowledged) assert.equal(readFileSync(join(files, name), 'utf8'), body, `round ${round}: acknowledged save ${name} lost`);
    }
    tally.acknowledgedSaves = acknowledged.size;
    t.diagnostic(`crash test: ${tally.kills} kills, ${tally.acknowledgedSaves} acknowledged saves all intact, ${tally.interrupted} executions interrupted and cleaned up, 0 failures`);
  } finally {
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    await admin.end();
    await db.drop();
  }
});
