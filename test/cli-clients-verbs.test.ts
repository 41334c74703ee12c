/**
 * The API client verbs beside those of cli-clients.test.ts, against a real
 * in-process daemon (test/helpers/cli-daemon.ts): a job named by its name,
 * `-o json` on `jobs run` (with and without --wait) and `execs cancel`,
 * `execs log -f` following a running execution, `files rename|delete` and
 * `jobs save|activate|deactivate`.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EXEC_ID } from './helpers/api-server.js';
import { runMain, startCliDaemon, withEnv, type CliDaemon, type Env } from './helpers/cli-daemon.js';
import { pgAvailable, requirePg } from './helpers/pg.js';

let fx: CliDaemon | undefined;
const state: { usersJob?: string; varsJob?: string } = {};

before(async () => {
  if (!(await pgAvailable())) return;
  fx = await startCliDaemon();
  const save = async (name: string, body: string) => {
    const src = path.join(fx!.base, path.basename(name));
    await writeFile(src, body);
    const out = await fx!.ok(['files', 'save', name, '--from', src]);
    return /\nDefault job: (job_[a-z0-9]{16})\n$/.exec(out)![1]!;
  };
  state.usersJob = await save('queries/users.sql', '-- connection: WAREHOUSE\nselect * from users\n');
  state.varsJob = await save('queries/vars.sql', "-- connection: WAREHOUSE\nselect '${A}+${B}' as v\n");
});

after(async () => {
  await fx?.close();
});

const ready = (t: TestContext) => requirePg(t);
const cli = (argv: readonly string[], env?: Env) => fx!.cli(argv, env);
const ok = (argv: readonly string[]) => fx!.ok(argv);
const json = (argv: readonly string[]) => fx!.json(argv);
const execution = async (id: string): Promise<any> => JSON.parse(await ok(['execs', 'get', id, '-o', 'json']));
const terminal = (e: any) => e.status !== 'queued' && e.status !== 'running';

async function waitFor(id: string, done: (e: any) => boolean, what: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const e = await execution(id);
    if (done(e)) return e;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for execution ${id} to be ${what}`);
}

const startedId = (out: string, jobId: string) => {
  const m = /^Started job (\S+) \(exec_id=(\S+)\)\n/.exec(out);
  assert.ok(m, out);
  assert.equal(m[1], jobId);
  assert.match(m[2]!, EXEC_ID);
  return m[2]!;
};

test('jobs run NAME: a job by its name; -o json prints the API answer, with --wait the finished execution', async (t) => {
  if (!(await ready(t))) return;
  const byName = await ok(['jobs', 'run', 'users']);
  const id = startedId(byName, state.usersJob!);
  await waitFor(id, terminal, 'finished');
  const started = await json(['jobs', 'run', 'users']);
  assert.equal(started.job_id, state.usersJob);
  assert.match(started.exec_id, EXEC_ID);
  await waitFor(started.exec_id, terminal, 'finished');
  const done = await withEnv(fx!.env, () => runMain(['jobs', 'run', 'vars', '--var', 'A=1', '--var', 'B=2', '--wait', '-o', 'json']));
  assert.equal(done.code, 0, done.err);
  const e = JSON.parse(done.out);
  assert.equal(e.status, 'success');
  assert.equal(e.job_id, state.varsJob);
  assert.deepEqual(await cli(['jobs', 'run', 'no-such-job']), { code: 1, out: '', err: 'error: no job named "no-such-job" (give its name or a job_… id; service jobs list shows them)\n' });
  assert.equal(JSON.parse(await ok(['jobs', 'get', 'users'])).id, state.usersJob);
  // cancel takes -o json too (the execution has ended, so the API answers with its conflict).
  const cancel = await cli(['execs', 'cancel', id, '-o', 'json']);
  assert.equal(cancel.code, 1);
  assert.match(cancel.err, /\(conflict\)\n$/);
});

test('execs log -f follows a running execution until it ends, printing its output once', async (t) => {
  if (!(await ready(t))) return;
  const nap = path.join(fx!.base, 'nap.sql');
  await writeFile(nap, '-- connection: WAREHOUSE\nselect 7 as napped from pg_sleep(1.5)\n');
  const saved = await ok(['files', 'save', 'queries/nap.sql', '--from', nap]);
  const jobId = /\nDefault job: (job_[a-z0-9]{16})\n$/.exec(saved)![1]!;
  const id = startedId(await ok(['jobs', 'run', 'nap']), jobId);
  const followed = await withEnv(fx!.env, () => runMain(['execs', 'log', id, '-f']));
  assert.equal(followed.code, 0, followed.err);
  assert.equal(followed.out.match(/^=== queries\/nap\.sql /gm)?.length, 1, followed.out);
  assert.match(followed.out, /napped/);
  assert.match(followed.out, new RegExp(`\\n--- execution ${id} ended: success\\n$`));
  // Once it has ended, -f prints what log prints, and the end line.
  const plain = await ok(['execs', 'log', id]);
  assert.ok(followed.out.includes(plain.split('\n').slice(1).join('\n').trim()), `${followed.out}\n---\n${plain}`);
});

test('files rename and files delete; jobs save, activate and deactivate', async (t) => {
  if (!(await ready(t))) return;
  const src = path.join(fx!.base, 'tmp.sql');
  await writeFile(src, '-- connection: WAREHOUSE\nselect 1 as one\n');
  const jobId = /\nDefault job: (job_[a-z0-9]{16})\n$/.exec(await ok(['files', 'save', 'queries/tmp.sql', '--from', src]))![1]!;
  assert.equal(await ok(['files', 'rename', 'queries/tmp.sql', 'queries/tmp2.sql']), `Renamed queries/tmp.sql to queries/tmp2.sql\nUpdated jobs: ${jobId}\n`);
  assert.equal(JSON.parse(await ok(['jobs', 'get', jobId])).file_name, 'queries/tmp2.sql');
  const jobFile = path.join(fx!.base, 'job.yaml');
  await writeFile(jobFile, 'job:\n  name: tmp nightly\n  type: query\n  file_name: queries/tmp2.sql\n  schedules: ["0 2 * * *"]\n');
  const saved = /^Saved job (job_[a-z0-9]{16}) \(tmp nightly, active=false\)\n$/.exec(await ok(['jobs', 'save', '--from', jobFile]));
  assert.ok(saved);
  const nightly = saved[1]!;
  assert.match(await ok(['jobs', 'activate', 'tmp nightly']), new RegExp(`^Activated job ${nightly} \\(next run \\d{4}-`));
  const active = await json(['jobs', 'get', nightly]);
  assert.deepEqual([active.active, active.schedules, active.name], [true, ['0 2 * * *'], 'tmp nightly']);
  assert.equal((await json(['jobs', 'deactivate', nightly])).active, false);
  // The file is referenced by a job that is not its default: the API refuses, the CLI says so.
  const refused = await cli(['files', 'delete', 'queries/tmp2.sql']);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /^error: .*referenced by jobs.* \(conflict\)\n$/);
  await withEnv(fx!.env, () => fetch(`${fx!.daemon.url}/project/job/delete`, { method: 'POST', headers: { Authorization: `Service-Project-Token ${fx!.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ job_id: nightly }) }));
  assert.deepEqual(await json(['files', 'delete', 'queries/tmp2.sql']), { name: 'queries/tmp2.sql', deleted: true, deleted_job_ids: [jobId] });
  assert.deepEqual(await cli(['files', 'delete', 'queries/tmp2.sql']), { code: 1, out: '', err: 'error: file "queries/tmp2.sql" not found (not_found)\n' });
});
