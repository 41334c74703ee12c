// The API client commands (`service jobs|execs|files …`,
// `service conns … --remote`) against a real in-process daemon: a fresh temp
// data dir, project `acme` and its token made by the operator commands, and a
// project env file whose WAREHOUSE connection is a fresh PostgreSQL database
// holding public.users with 3 rows (test/helpers/cli-daemon.ts). Every
// command runs through `main()` with captured output. Tests run in order and
// share the jobs and executions they create. The operator commands
// are in cli-clients-operator.test.ts.
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EXEC_ID, JOB_ID, TIME } from './helpers/api-server.js';
import { runMain, startCliDaemon, withEnv, type CliDaemon, type Env } from './helpers/cli-daemon.js';
import { pgAvailable, requirePg } from './helpers/pg.js';

let fx: CliDaemon | undefined;
/** Shared between the ordered tests. */
const state: { usersJob?: string; brokenJob?: string; slowJob?: string; varsJob?: string; usersExec?: string; brokenExec?: string } = {};

before(async () => {
  if (await pgAvailable()) fx = await startCliDaemon();
});

after(async () => {
  await fx?.close();
});

const ready = (t: TestContext) => requirePg(t);
const cli = (argv: readonly string[], env?: Env) => fx!.cli(argv, env);
const ok = (argv: readonly string[]) => fx!.ok(argv);
const json = (argv: readonly string[]) => fx!.json(argv);
const lines = (text: string) => text.trimEnd().split('\n');
/** The cells of a table line (columns are separated by two or more spaces; empty cells collapse). */
const cells = (line: string) => line.split(/ {2,}/);
const execution = async (id: string): Promise<any> => JSON.parse(await ok(['execs', 'get', id, '-o', 'json']));

/** Polls `execs get` (bounded) until the execution satisfies `done`. */
async function waitFor(id: string, done: (e: any) => boolean, what: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const e = await execution(id);
    if (done(e)) return e;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for execution ${id} to be ${what}`);
}
const terminal = (e: any) => e.status !== 'queued' && e.status !== 'running';
const startedId = (out: string, jobId: string) => {
  const m = /^Started job (\S+) \(exec_id=(\S+)\)\n/.exec(out);
  assert.ok(m, out);
  assert.equal(m[1], jobId);
  assert.match(m[2]!, EXEC_ID);
  return m[2]!;
};

test('missing token: SERVICE_PROJECT_TOKEN is not set, exit 1 (process env empty, no home env file)', async (t) => {
  if (!(await ready(t))) return;
  for (const argv of [['files', 'list'], ['jobs', 'list'], ['execs', 'list'], ['conns', 'list', '--remote']]) {
    for (const tok of [undefined, '']) {
      const r = await cli(argv, { SERVICE_PROJECT_TOKEN: tok });
      assert.deepEqual(r, { code: 1, out: '', err: 'SERVICE_PROJECT_TOKEN is not set\n' }, argv.join(' '));
    }
  }
});

test('token and host fall back to the env: map of the home env file', async (t) => {
  if (!(await ready(t))) return;
  const home = path.join(fx!.base, 'home2');
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { recursive: true });
  await writeFile(path.join(home, 'env.yaml'), `env:\n  SERVICE_PROJECT_TOKEN: ${fx!.token}\n  SERVICE_PLATFORM_HOST: ${fx!.daemon.url}/\n`);
  const r = await cli(['conns', 'list', '--remote', '-o', 'json'], { SERVICE_PROJECT_TOKEN: undefined, SERVICE_PLATFORM_HOST: undefined, SERVICE_HOME_DIR: home });
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out).connections.map((c: any) => `${c.name}:${c.source}`), ['BROKEN:project', 'LAKE:project', 'WAREHOUSE:project']);
});

test('unreachable host: cannot reach <host>: <detail>, exit 1', async (t) => {
  if (!(await ready(t))) return;
  const r = await cli(['jobs', 'list'], { SERVICE_PLATFORM_HOST: 'http://127.0.0.1:1' });
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(r.err, /^cannot reach http:\/\/127\.0\.0\.1:1: \S.*\n$/);
});

test('API errors: error: <error> (<code>), exit 1', async (t) => {
  if (!(await ready(t))) return;
  const unauthorized = await cli(['files', 'list'], { SERVICE_PROJECT_TOKEN: 'c9d488b1-cfbf-4360-9cfc-865239194242' });
  assert.deepEqual(unauthorized, { code: 1, out: '', err: 'error: missing or invalid project token (unauthorized)\n' });
  const missing = await cli(['jobs', 'get', 'job_aaaaaaaaaaaaaaaa']);
  assert.deepEqual(missing, { code: 1, out: '', err: 'error: job job_aaaaaaaaaaaaaaaa not found (not_found)\n' });
  const noFile = await cli(['files', 'get', 'nope.txt']);
  assert.equal(noFile.code, 1);
  assert.match(noFile.err, /^error: .*nope\.txt.* \(not_found\)\n$/);
  const badType = await cli(['jobs', 'list', '--type', 'cron']);
  assert.equal(badType.code, 1);
  assert.match(badType.err, /^error: .* \(bad_request\)\n$/);
});

test('files save --from: Saved file NAME (<size> bytes), Default job: <id> only on creation', async (t) => {
  if (!(await ready(t))) return;
  const src = async (name: string, body: string) => {
    const p = path.join(fx!.base, name);
    await writeFile(p, body);
    return p;
  };
  const users = '-- connection: WAREHOUSE\nselect * from users\n';
  const first = await ok(['files', 'save', 'queries/users.sql', '--from', await src('users.sql', users)]);
  const m = /^Saved file queries\/users\.sql \((\d+) bytes\)\nDefault job: (\S+)\n$/.exec(first);
  assert.ok(m, first);
  assert.equal(Number(m[1]), Buffer.byteLength(users));
  assert.match(m[2]!, JOB_ID);
  state.usersJob = m[2]!;
  assert.equal(await ok(['files', 'save', 'queries/users.sql', '--from', path.join(fx!.base, 'users.sql')]), `Saved file queries/users.sql (${Buffer.byteLength(users)} bytes)\n`);
  assert.equal(await ok(['files', 'save', 'README.md', '--from', await src('readme.md', '# acme\n')]), 'Saved file README.md (7 bytes)\n');
  const job = (name: string, file: string) => async () => {
    const out = await ok(['files', 'save', name, '--from', file]);
    return /\nDefault job: (job_[a-z0-9]{16})\n$/.exec(out)![1]!;
  };
  state.brokenJob = await job('queries/broken.sql', await src('broken.sql', '-- connection: WAREHOUSE\nselect * from no_such_table\n'))();
  state.slowJob = await job('queries/slow.sql', await src('slow.sql', '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n'))();
  state.varsJob = await job('queries/vars.sql', await src('vars.sql', "-- connection: WAREHOUSE\nselect '${A}+${B}' as v\n"))();
});

test('files save of an invalid job file: one line per problem NAME:<line>:<column>: <path>: <message>, exit 1', async (t) => {
  if (!(await ready(t))) return;
  const file = path.join(fx!.base, 'bad.yaml');
  await writeFile(file, 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    mode: sideways\nbogus: 1\n');
  const r = await cli(['files', 'save', 'replications/bad.yaml', '--from', file]);
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  const problems = lines(r.err);
  assert.deepEqual(problems.map((l) => /^replications\/bad\.yaml:(\d+):(\d+): ([^:]*): ./.exec(l)?.slice(1)), [
    ['4', '3', 'streams["public.users"]'],
    ['5', '11', 'streams["public.users"].mode'],
    ['6', '1', 'bogus'],
  ]);
  assert.match(problems[1]!, /: unknown mode "sideways"/);
  assert.match(problems[2]!, /: unknown key "bogus"$/);
  // Not written.
  const missing = await cli(['files', 'get', 'replications/bad.yaml']);
  assert.equal(missing.code, 1);
});

test('files save: binary content goes as base64; an unreadable --from is an error, exit 1', async (t) => {
  if (!(await ready(t))) return;
  const file = path.join(fx!.base, 'blob.bin');
  const bytes = Buffer.from([0xff, 0x00, 0x41, 0xfe]);
  await writeFile(file, bytes);
  assert.equal(await ok(['files', 'save', 'data/blob.bin', '--from', file]), 'Saved file data/blob.bin (4 bytes)\n');
  const got = await json(['files', 'get', 'data/blob.bin']);
  assert.deepEqual([got.encoding, Buffer.from(got.body, 'base64')], ['base64', bytes]);
  const missing = await cli(['files', 'save', 'x.txt', '--from', path.join(fx!.base, 'no-such-file')]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /^error: cannot read .*no-such-file: .*ENOENT/);
});

test('usage errors: unknown flag, missing argument, bad -o value, unknown subcommand → error: …, exit 2', async (t) => {
  if (!(await ready(t))) return;
  const hint = (command: string) => `\nRun 'service ${command} --help' for usage.\n`;
  assert.deepEqual(await cli(['jobs', 'list', '--bogus']), { code: 2, out: '', err: `error: unknown flag: --bogus${hint('jobs list')}` });
  assert.deepEqual(await cli(['jobs', 'get']), { code: 2, out: '', err: `error: service jobs get needs JOB${hint('jobs get')}` });
  assert.deepEqual(await cli(['files', 'save']), { code: 2, out: '', err: `error: service files save needs NAME${hint('files save')}` });
  assert.deepEqual(await cli(['execs', 'list', '-o', 'yaml']), { code: 2, out: '', err: `error: invalid argument "yaml" for "-o": expected table or json${hint('execs list')}` });
  assert.deepEqual(await cli(['jobs', 'run', 'job_x', '--var', 'NOEQUALS']), { code: 2, out: '', err: `error: invalid argument "NOEQUALS" for "--var": expected K=V${hint('jobs run')}` });
  assert.deepEqual(await cli(['jobs', 'explode']), { code: 2, out: '', err: `error: unknown jobs command "explode", expected list, get, run, save, activate, or deactivate${hint('jobs')}` });
  assert.deepEqual(await cli(['execs', 'list', '--since', 'yesterday']), {
    code: 2,
    out: '',
    err: `error: invalid argument "yesterday" for "--since": expected an RFC 3339 time (2026-11-24T08:00:00Z) or a date (2026-11-24)${hint('execs list')}`,
  });
  assert.equal((await cli(['execs', 'list', '--until', '2026-13-45'])).code, 2);
  assert.equal((await cli(['execs', 'list', '--since', '2026-01-01', '-o', 'json'])).code, 0, 'a date is midnight UTC');
  // Usage comes before the token check.
  assert.equal((await cli(['jobs', 'explode'], { SERVICE_PROJECT_TOKEN: undefined })).code, 2);
});

test('files list: table name/size/updated, --prefix, -o json; files get prints the raw body', async (t) => {
  if (!(await ready(t))) return;
  const table = lines(await ok(['files', 'list']));
  assert.deepEqual(cells(table[0]!), ['NAME', 'SIZE', 'UPDATED']);
  const rows = table.slice(1).map(cells);
  const names = rows.map((r) => r[0]);
  for (const n of ['README.md', 'queries/users.sql', 'queries/slow.sql', 'data/blob.bin']) assert.ok(names.includes(n), `${n} in ${names.join(',')}`);
  const readme = rows.find((r) => r[0] === 'README.md')!;
  assert.equal(readme[1], '7');
  assert.match(readme[2]!, TIME);
  const body = await json(['files', 'list', '--prefix', 'queries/']);
  assert.deepEqual(Object.keys(body), ['files']);
  const queryFiles = body.files.filter((f: any) => !f.is_dir).map((f: any) => f.name).sort();
  assert.deepEqual(queryFiles, ['queries/broken.sql', 'queries/slow.sql', 'queries/users.sql', 'queries/vars.sql']);
  assert.equal(await ok(['files', 'get', 'queries/users.sql']), '-- connection: WAREHOUSE\nselect * from users\n');
  assert.equal(await ok(['files', 'get', 'README.md']), '# acme\n');
  for (const form of [['-o=json'], ['-ojson'], ['--output', 'json'], ['--output=json']]) assert.equal(JSON.parse(await ok(['files', 'get', 'README.md', ...form])).body, '# acme\n');
  assert.equal(await ok(['files', 'get', 'README.md', '-o', 'table']), '# acme\n');
  const asJson = await json(['files', 'get', 'README.md']);
  assert.equal(asJson.body, '# acme\n');
});

test('jobs list: table id/name/type/file/active/default/executed/next_run, filters, -o json; jobs get', async (t) => {
  if (!(await ready(t))) return;
  const table = lines(await ok(['jobs', 'list']));
  assert.deepEqual(cells(table[0]!), ['ID', 'NAME', 'TYPE', 'FILE', 'ACTIVE', 'DEFAULT', 'EXECUTED', 'NEXT_RUN']);
  const users = table.find((l) => l.startsWith(state.usersJob!));
  assert.ok(users, table.join('\n'));
  assert.deepEqual(cells(users), [state.usersJob, 'users', 'query', 'queries/users.sql', 'false', 'true']);
  assert.equal(table.length, 1 + 4);
  const body = await json(['jobs', 'list', '--type', 'query']);
  assert.deepEqual(Object.keys(body), ['jobs']);
  assert.equal(body.jobs.length, 4);
  assert.deepEqual((await json(['jobs', 'list', '--name', 'slow'])).jobs.map((j: any) => j.id), [state.slowJob]);
  assert.deepEqual((await json(['jobs', 'list', '--file-name', 'queries/broken.sql'])).jobs.map((j: any) => j.id), [state.brokenJob]);
  assert.deepEqual((await json(['jobs', 'list', '--type', 'pipeline'])).jobs, []);
  const job = JSON.parse(await ok(['jobs', 'get', state.usersJob!]));
  assert.deepEqual([job.id, job.name, job.type, job.file_name, job.default, job.active, job.executed], [state.usersJob, 'users', 'query', 'queries/users.sql', true, false, null]);
  assert.deepEqual(await json(['jobs', 'get', state.usersJob!]), job);
});

test('jobs run --wait: Started job … then the status line; exit 0 on success, 1 on a failing query', async (t) => {
  if (!(await ready(t))) return;
  // Both waited runs at once: --wait polls every 5 s, so they share the wait.
  const [good, bad] = await withEnv(fx!.env, () =>
    Promise.all([runMain(['jobs', 'run', state.usersJob!, '--wait']), runMain(['jobs', 'run', state.brokenJob!, '--wait'])]),
  );
  assert.equal(good.err, '');
  assert.equal(good.code, 0, good.out);
  state.usersExec = startedId(good.out, state.usersJob!);
  assert.match(lines(good.out)[1]!, /^status=success rows=3 bytes=\d+ duration=[\d.]+s$/);
  assert.equal(lines(good.out).length, 2);
  assert.equal(bad.code, 1, bad.out + bad.err);
  state.brokenExec = startedId(bad.out, state.brokenJob!);
  assert.match(lines(bad.out)[1]!, /^status=error rows=0 bytes=\d+ duration=[\d.]+s error=.*no_such_table/);
});

test('jobs run without --wait, with --var K=V (repeatable) overrides; an override for the wrong job type is an API error', async (t) => {
  if (!(await ready(t))) return;
  const out = await ok(['jobs', 'run', state.varsJob!, '--var', 'A=1', '--var', 'B=x=y']);
  assert.equal(lines(out).length, 1);
  const id = startedId(out, state.varsJob!);
  const e = await waitFor(id, terminal, 'finished');
  assert.equal(e.status, 'success', e.error);
  assert.equal(e.trigger, 'manual');
  assert.match(await ok(['execs', 'log', id]), /1\+x=y/);
  const wrong = await cli(['jobs', 'run', state.usersJob!, '--streams', 'a,b']);
  assert.deepEqual(wrong, { code: 1, out: '', err: 'error: streams does not apply to query jobs (bad_request)\n' });
});

test('execs list: table exec_id/job/status/start/duration/rows, filters, --limit, --asc, --since/--until, -o json', async (t) => {
  if (!(await ready(t))) return;
  const table = lines(await ok(['execs', 'list']));
  assert.deepEqual(cells(table[0]!), ['EXEC_ID', 'JOB', 'STATUS', 'START', 'DURATION', 'ROWS']);
  assert.equal(table.length, 1 + 3);
  const row = cells(table.find((l) => l.startsWith(state.usersExec!))!);
  assert.deepEqual([row[0], row[1], row[2], row[5]], [state.usersExec, 'users', 'success', '3']);
  assert.match(row[3]!, TIME);
  assert.match(row[4]!, /^\d+(\.\d+)?$/);
  const body = await json(['execs', 'list']);
  assert.deepEqual(Object.keys(body), ['executions']);
  assert.equal(body.executions.length, 3);
  assert.deepEqual((await json(['execs', 'list', '--job-id', state.brokenJob!])).executions.map((e: any) => e.exec_id), [state.brokenExec]);
  assert.deepEqual((await json(['execs', 'list', '--status', 'error'])).executions.map((e: any) => e.exec_id), [state.brokenExec]);
  const desc = body.executions.map((e: any) => e.exec_id);
  assert.deepEqual((await json(['execs', 'list', '--asc'])).executions.map((e: any) => e.exec_id), [...desc].reverse());
  assert.deepEqual((await json(['execs', 'list', '--limit', '1'])).executions.map((e: any) => e.exec_id), [desc[0]]);
  const newest = body.executions[0].start_time;
  assert.deepEqual((await json(['execs', 'list', '--since', newest])).executions.map((e: any) => e.exec_id), [desc[0]]);
  assert.deepEqual((await json(['execs', 'list', '--until', newest])).executions.map((e: any) => e.exec_id), desc.slice(1));
  const badLimit = await cli(['execs', 'list', '--limit', '0']);
  assert.deepEqual(badLimit, { code: 1, out: '', err: 'error: limit must be an integer between 1 and 100 (bad_request)\n' });
});

test('execs get: the record; an unknown id → execution <id> not found, exit 1', async (t) => {
  if (!(await ready(t))) return;
  const e = await execution(state.usersExec!);
  assert.deepEqual([e.exec_id, e.job_id, e.job_type, e.status, e.rows, e.trigger], [state.usersExec, state.usersJob, 'query', 'success', 3, 'manual']);
  assert.deepEqual(await json(['execs', 'get', state.usersExec!]), e);
  // The default is the table its help promises: one FIELD/VALUE row per field.
  const table = lines(await ok(['execs', 'get', state.usersExec!]));
  assert.deepEqual(cells(table[0]!), ['FIELD', 'VALUE']);
  assert.deepEqual(cells(table.find((l) => l.startsWith('status '))!), ['status', 'success']);
  assert.deepEqual(cells(table.find((l) => l.startsWith('exec_id '))!), ['exec_id', state.usersExec]);
  const unknown = await cli(['execs', 'get', '2p0000000000000000000000000']);
  assert.deepEqual(unknown, { code: 1, out: '', err: 'execution 2p0000000000000000000000000 not found\n' });
});

test('execs log: a banner per task then its output; --stream, --status; pipeline steps by step id', async (t) => {
  if (!(await ready(t))) return;
  const log = await ok(['execs', 'log', state.usersExec!]);
  assert.ok(log.startsWith('=== queries/users.sql (status=success) ===\n'), log);
  assert.match(log, /ada/);
  assert.equal(log.match(/^=== /gm)!.length, 1);
  assert.equal(await ok(['execs', 'log', state.usersExec!, '--stream', 'queries/users.sql']), log);
  assert.equal(await ok(['execs', 'log', state.usersExec!, '--stream', 'other.sql']), '');
  assert.equal(await ok(['execs', 'log', state.usersExec!, '--status', 'error']), '');
  assert.match(await ok(['execs', 'log', state.brokenExec!]), /^=== queries\/broken\.sql \(status=error\) ===\n/);
  const tasks = await json(['execs', 'log', state.usersExec!]);
  assert.deepEqual(tasks.map((x: any) => [x.task_id, x.stream_name]), [['task_1', 'queries/users.sql']]);
  // A pipeline execution (records written as the runner writes them).
  const now = new Date().toISOString();
  const store = fx!.daemon.store;
  const exec = await store.createExecution({ project_id: fx!.projectId, job_id: 'job_pppppppppppppppp', job_name: 'daily', job_type: 'pipeline', file_name: 'pipelines/daily.yaml', trigger: 'schedule', start_time: now });
  for (const [id, status] of [['load', 'success'], ['each.q[0]', 'error']] as const) {
    await store.upsertStep({ exec_id: exec.exec_id, step_id: id, type: 'query', status, start_time: now, end_time: now, state: {} });
    await store.appendStepOutput(exec.exec_id, id, `${id} done\n`);
  }
  await store.updateExecution(exec.exec_id, { status: 'error', end_time: now });
  assert.equal(await ok(['execs', 'log', exec.exec_id]), '=== load (status=success) ===\nload done\n=== each.q[0] (status=error) ===\neach.q[0] done\n');
  assert.equal(await ok(['execs', 'log', exec.exec_id, '--step', 'each']), '=== each.q[0] (status=error) ===\neach.q[0] done\n');
  const unknown = await cli(['execs', 'log', '2p0000000000000000000000000']);
  assert.deepEqual(unknown, { code: 1, out: '', err: 'execution 2p0000000000000000000000000 not found\n' });
});

test('execs cancel of a running pg_sleep(60) query: Cancelled <id>; cancelling again is an API error', async (t) => {
  if (!(await ready(t))) return;
  const id = startedId(await ok(['jobs', 'run', state.slowJob!]), state.slowJob!);
  await waitFor(id, (e) => e.status === 'running', 'running');
  assert.equal(await ok(['execs', 'cancel', id]), `Cancelled ${id}\n`);
  const e = await execution(id);
  assert.equal(e.status, 'cancelled');
  const again = await cli(['execs', 'cancel', id]);
  assert.deepEqual(again, { code: 1, out: '', err: `error: execution ${id} is not running or queued (status: cancelled) (conflict)\n` });
});

test('conns list --remote: table name/type/kind/source, -o json; SERVICE_PLATFORM_HOST alone also goes remote', async (t) => {
  if (!(await ready(t))) return;
  const table = lines(await ok(['conns', 'list', '--remote']));
  assert.deepEqual(table.map(cells), [
    ['NAME', 'TYPE', 'KIND', 'SOURCE'],
    ['BROKEN', 'postgres', 'database', 'project'],
    ['LAKE', 'duckdb', 'database', 'project'],
    ['WAREHOUSE', 'postgres', 'database', 'project'],
  ]);
  assert.deepEqual(await json(['conns', 'list']), {
    connections: [
      { name: 'BROKEN', type: 'postgres', kind: 'database', source: 'project' },
      { name: 'LAKE', type: 'duckdb', kind: 'database', source: 'project' },
      { name: 'WAREHOUSE', type: 'postgres', kind: 'database', source: 'project' },
    ],
  });
});

test('conns test NAME --remote: Connection NAME: valid; the connection error and exit 1; unknown name is an API error', async (t) => {
  if (!(await ready(t))) return;
  assert.equal(await ok(['conns', 'test', 'WAREHOUSE', '--remote']), 'Connection WAREHOUSE: valid\n');
  const broken = await cli(['conns', 'test', 'BROKEN', '--remote']);
  assert.equal(broken.code, 1);
  assert.equal(broken.out, '');
  assert.match(broken.err, /^could not connect to BROKEN: .*\n$/);
  assert.doesNotMatch(broken.err, /s3cret-pw/);
  const nope = await cli(['conns', 'test', 'NOPE', '--remote']);
  assert.deepEqual(nope, { code: 1, out: '', err: 'error: connection NOPE not found (not_found)\n' });
});
