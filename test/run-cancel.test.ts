/**
 * The compiled binary (SIGINT, exit codes, A25): a PostgreSQL smoke run
 * through dist/'s worker threads, and SIGINT / SIGTERM while a node's query
 * is in flight on PostgreSQL and DuckDB — the query is cancelled, the
 * payload is still printed, the exit code is 130 / 143, and nothing is left
 * behind.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { payload } from './helpers/run-payload.js';
import { duckWarehouse, pgWarehouse, tempTables } from './helpers/warehouse.js';
import { within } from './helpers/within.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'service.js');

const pgWh = pgWarehouse('run_cancel');
before(() => pgWh.setup());
after(() => pgWh.close());

interface Spawned {
  readonly child: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
  /** Exit code, or the signal name when the process died of a signal. */
  readonly exited: Promise<number | string>;
}

function service(args: string[]): Spawned {
  assert.ok(existsSync(join(ROOT, 'dist', 'cli', 'main.js')), 'dist/ is missing: run `npm run build` (npm test does it in pretest)');
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, SERVICE_LOGGING: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, out: () => out, err: () => err, exited };
}

/** Polls `probe` every 50 ms until it is true; fails if the child exits first. */
async function until(s: Spawned, what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  let done = false;
  void s.exited.then(() => (done = true));
  while (!(await probe())) {
    if (done) assert.fail(`the process exited before ${what}:\n${s.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SLOW = { 's.sql': 'select 1 as id from (select pg_sleep(30)) x', 't.sql': "select * from {{ ref('s') }}" };

async function activeSleeps(dir: string): Promise<number> {
  const rows = await pgWh.query(
    dir,
    "select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and query like '%pg' || '_sleep(30)%' and pid <> pg_backend_pid()",
  );
  return Number(rows[0]!.n);
}

async function assertNothingLeft(dir: string): Promise<void> {
  assert.equal(await activeSleeps(dir), 0, 'the backend query was cancelled');
  assert.deepEqual(await pgWh.query(dir, "select table_name from information_schema.tables where table_schema = 'public' and table_name = 's'"), []);
  assert.deepEqual(await tempTables(pgWh, dir), []);
}

test('smoke: the compiled binary runs a PostgreSQL project on its worker threads', async (t) => {
  if (!(await pgWh.ready(t))) return;
  const dir = pgWh.project({ 'one.sql': 'select 1 as id', 'two.sql': "select id + 1 as id from {{ ref('one') }}" }, 'defaults:\n  schema: smoke\n');
  const s = service(['build', 'run', dir, '--threads', '2']);
  assert.equal(await s.exited, 0, s.err());
  assert.equal(s.out(), '');
  assert.match(s.err(), /INF \[2\/2\] smoke\.two \(full-refresh\) \.+ OK \(/);
  assert.match(s.err(), /INF Build Completed in \S+ \| 2 Successes \| 0 Failures\n$/);
  assert.deepEqual(await pgWh.query(dir, 'select id from smoke.two'), [{ id: '2' }]);
});

test('A25: SIGINT cancels the running query, prints the payload and exits 130', { timeout: 60_000 }, async (t) => {
  if (!(await pgWh.ready(t))) return;
  const dir = pgWh.project(SLOW);
  const s = service(['build', 'run', dir, '--json']);
  // --json prints no progress lines: wait until s's query is running in the database.
  await until(s, "s's pg_sleep query started", async () => (await activeSleeps(dir)) > 0);
  s.child.kill('SIGINT');
  assert.equal(await within(s.exited, 10_000, 'the exit after SIGINT (the query must be cancelled, not left to finish)'), 130, s.err());
  const p = payload({ code: 130, out: s.out(), err: s.err() });
  assert.deepEqual(
    p.results.map((r) => [r.name, r.status, r.error, r.rows]),
    [['public.s', 'error', 'cancelled', 0], ['public.t', 'skipped', '', 0]],
  );
  assert.deepEqual([p.total, p.ok, p.failed, p.skipped], [2, 0, 1, 1]);
  assert.match(s.err(), /INF interrupted: cancelling 1 running node\(s\)\n/);
  assert.match(s.err(), /INF Build Completed in \S+ \| 0 Successes \| 1 Failures \| 1 Skipped\n/);
  await assertNothingLeft(dir);
});

test('SIGTERM right after the START line: exit 143, errors block says cancelled', { timeout: 60_000 }, async (t) => {
  if (!(await pgWh.ready(t))) return;
  const dir = pgWh.project(SLOW);
  const s = service(['build', 'run', dir]);
  await until(s, 'the START line of public.s', () => /\[1\/2\] public\.s \(full-refresh\) \.+ START\n/.test(s.err()));
  s.child.kill('SIGTERM');
  assert.equal(await within(s.exited, 10_000, 'the exit after SIGTERM (the query must be cancelled, not left to finish)'), 143, s.err());
  assert.equal(s.out(), 'Errors:\n  - public.s:\n      cancelled\n');
  assert.match(s.err(), /ERR \[1\/2\] public\.s \(full-refresh\) \.+ FAIL \(/);
  assert.match(s.err(), /INF \[2\/2\] public\.t \(full-refresh\) \.+ SKIP\n/);
  await assertNothingLeft(dir);
});

test('DuckDB: SIGINT after START interrupts the running query; exit 130, t skipped, no table', { timeout: 60_000 }, async () => {
  const duck = duckWarehouse();
  const dir = duck.project({ 's.sql': 'select count(*) as n from range(100000000000) a', 't.sql': "select * from {{ ref('s') }}" });
  const s = service(['build', 'run', dir]);
  await until(s, 'the START line of public.s', () => /\[1\/2\] public\.s \(full-refresh\) \.+ START\n/.test(s.err()));
  s.child.kill('SIGINT');
  assert.equal(await within(s.exited, 10_000, 'the exit after SIGINT (the query must be cancelled, not left to finish)'), 130, s.err());
  assert.equal(s.out(), 'Errors:\n  - public.s:\n      cancelled\n');
  assert.match(s.err(), /INF \[2\/2\] public\.t \(full-refresh\) \.+ SKIP\n/);
  assert.deepEqual(await duck.query(dir, "select table_name from information_schema.tables where table_name in ('s', 't')"), []);
});
