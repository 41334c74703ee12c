/**
 * What the CLI says when something goes wrong: a SQL error names the model
 * file and its line on both targets; a connection that is down prints one
 * `fatal:` line and nothing else (the compiled binary, worker threads
 * included); usage mistakes name the flag or suggest the command meant.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { positionLines } from '../engine/targets/postgres/driver.js';
import { build, cli, project } from './helpers/build-cli.js';
import { duckWarehouse, pgWarehouse } from './helpers/warehouse.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const pgWh = pgWarehouse('cli_err');
before(() => pgWh.setup());
after(() => pgWh.close());

// Two template lines above the error: the statement's line numbers are not the file's.
const BAD = ['-- revenue by day', '{% set unused = 1 %}', 'select 1 as a,', '  2 as b,', '  nosuchcol as c', 'from (select 1 as one) t', ''].join('\n');

for (const wh of [duckWarehouse(), pgWh]) {
  describe(`SQL errors on ${wh.kind}`, () => {
    test('name the model file and the line of it, once in the Errors block and once in the fatal line', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'marts/bad.sql': BAD }, wh.kind === 'postgres' ? 'defaults:\n  schema: cli_err\n' : '');
      const r = await build('run', dir, ...wh.args);
      assert.equal(r.code, 1);
      assert.match(r.out, /^Errors:\n {2}- \S+\.bad:\n {6}could not materialize model 'bad' \(full-refresh\): [^\n]*nosuchcol[^\n]*\n/);
      assert.match(r.out, /\n {6}LINE \d+: {3}nosuchcol as c\n {6} +\^\n {6}at marts\/bad\.sql:5\n$/);
      const fatal = r.err.split('\n').filter((l) => l.startsWith('fatal: '));
      assert.equal(fatal.length, 1, r.err);
      assert.match(fatal[0]!, /^fatal: build execution failed: build completed with 1 error\(s\): \S+\.bad: could not materialize model 'bad' \(full-refresh\): .*nosuchcol.* \(at marts\/bad\.sql:5\)$/);
      // Nothing of the error on stderr besides the fatal line (the FAIL progress line carries no message).
      assert.equal(r.err.split('\n').filter((l) => l.includes('nosuchcol')).length, 1, r.err);
    });
  });
}

test('positionLines renders a PostgreSQL error position the way psql does', () => {
  const sql = 'create table x as (\nselect 1 as a,\n  nosuchcol as c\n)';
  assert.equal(positionLines(sql, sql.indexOf('nosuchcol') + 1), '\nLINE 3:   nosuchcol as c\n          ^');
  assert.equal(positionLines('select nope', 8), '\nLINE 1: select nope\n               ^');
});

/** A TCP port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

test('a connection that is down: one fatal line, nothing else on stderr, nothing on stdout (compiled binary, 8 threads)', async () => {
  assert.ok(existsSync(join(ROOT, 'dist', 'cli', 'main.js')), 'dist/ is missing: run `npm run build`');
  const port = await closedPort();
  const dir = project({
    'service_build.yml': 'target: DOWN\n',
    'env.yaml': `connections:\n  DOWN:\n    url: postgresql://postgres@127.0.0.1:${port}/postgres\n`,
    ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`m${i}.sql`, `select ${i} as x`])),
  });
  for (const extra of [['--json'], []]) {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'service.js'), 'build', 'run', dir, '--threads', '8', ...extra], { encoding: 'utf8', env: { ...process.env, SERVICE_LOGGING: '' } });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `fatal: could not connect to 'DOWN': connect ECONNREFUSED 127.0.0.1:${port}\n`);
  }
});

test('--threads below 1 means the default 4, with a warning naming the flag', async () => {
  const duck = duckWarehouse();
  const dir = duck.project({ 'a.sql': 'select 1 as x' });
  for (const [cmd, v] of [['run', '0'], ['run', '-3'], ['test', '0']] as const) {
    const r = await build(cmd, dir, '--threads', v);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, new RegExp(`WRN --threads ${v} is below 1: using the default 4`));
  }
});

test('an unknown command lists every choice, graph included, and suggests the closest', async () => {
  const usage = async (...argv: string[]) => {
    const r = await cli(...argv);
    assert.equal(r.code, 2);
    return r.err.split('\n')[0];
  };
  assert.equal(await usage('build', 'biuld'), 'error: unknown build command "biuld", expected run, list, test, or compile (or graph)');
  assert.equal(await usage('build', 'grpah'), 'error: unknown build command "grpah", expected run, list, test, or compile (or graph); did you mean "graph"?');
  assert.equal(await usage('build', 'comp'), 'error: unknown build command "comp", expected run, list, test, or compile (or graph); did you mean "compile"?');
  assert.match(await usage('biuld', 'run'), /^error: unknown command "biuld", expected init, build, run, serve, .*, or bench; did you mean "build"\?$/);
  assert.match(await usage('jobs', 'lst'), /; did you mean "list"\?$/);
});
