// Stream settings on real databases: `select` with and without
// exclusions, `where`, `source_options.limit`, `column_casing`, `pre_sql` /
// `post_sql`, custom `sql:` from a project file with `${NAME}`, DuckDB to
// DuckDB on the same and on another file, several streams at once, secrets
// that never reach a message or log, and the runner of pipeline steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationStepService } from '../actors/daemon/replication-work.js';
import { SECRET, replicationSuite } from './helpers/replication-env.js';

const ready = replicationSuite('repl_settings', async (env) => {
  await pgQuery(env.db.url, `create schema src;
    create table src.people ("UserId" int, "FirstName" text, secret text, region text);
    insert into src.people select g, 'n' || g, 'pw' || g, case when g % 2 = 0 then 'eu' else 'us' end from generate_series(1, 10) g;
    create table src.t1 as select g as id from generate_series(1, 1000) g;
    create table src.t2 as select g as id from generate_series(1, 2000) g;
    create table src.t3 as select g as id from generate_series(1, 3000) g;`);
});

test('select excluding a column, where, limit and snake column casing into DuckDB', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const r = await e.run(replicationFile([
    'source: WAREHOUSE',
    'target: LAKE',
    'streams:',
    '  src.people:',
    '    object: s.people',
    '    select: [-secret]',
    "    where: region = 'eu'",
    '    source_options: {limit: 3}',
    '    target_options: {column_casing: snake}',
    '',
  ].join('\n')));
  assert.equal(r.status, 'success', JSON.stringify(r.tasks));
  assert.equal(r.rows, 3);
  assert.deepEqual(await duckRows(e.lake, "select column_name from information_schema.columns where table_schema = 's' and table_name = 'people' order by ordinal_position"), [['user_id'], ['first_name'], ['region']]);
  assert.deepEqual(await duckRows(e.lake, 'select count(*), count(*) filter (where region = \'eu\') from s.people'), [[3, 3]]);
});

test('select listing columns keeps their order; pre_sql and post_sql run on the target around the load', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const r = await e.run(replicationFile([
    'source: WAREHOUSE',
    'target: PGTWO',
    'streams:',
    '  src.people:',
    '    object: s.people_pg',
    '    select: [region, UserId]',
    '    target_options:',
    "      pre_sql: create table if not exists s.audit (what text); insert into s.audit values ('pre')",
    "      post_sql: insert into s.audit select 'post ' || count(*) from s.people_pg",
    '',
  ].join('\n')));
  assert.equal(r.status, 'success', JSON.stringify(r.tasks));
  const cols = await pgQuery(e.db.url, "select column_name from information_schema.columns where table_schema = 's' and table_name = 'people_pg' order by ordinal_position");
  assert.deepEqual(cols.map((c) => c.column_name), ['region', 'UserId']);
  assert.deepEqual((await pgQuery(e.db.url, 'select what from s.audit')).map((x) => x.what), ['pre', 'post 10']);
});

test('custom SQL from a project file with ${NAME}; DuckDB → DuckDB on the same file and on another file', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await writeFile(path.join(e.dir, 'q.sql'), 'select "UserId" as id, "FirstName" as name from src.people where "UserId" <= ${MAX};\n');
  const sql = await e.run(replicationFile('source: WAREHOUSE\ntarget: LAKE\nstreams:\n  top:\n    sql: file://q.sql\n    object: d.top\n'), { vars: (n) => (n === 'MAX' ? '4' : undefined) });
  assert.equal(sql.status, 'success', JSON.stringify(sql.tasks));
  const same = await e.run(replicationFile('source: LAKE\ntarget: LAKE\nstreams:\n  d.top:\n    object: d.top_copy\n    where: id > 1\n'));
  assert.equal(same.status, 'success', JSON.stringify(same.tasks));
  assert.deepEqual(await duckRows(e.lake, 'select id, name from d.top_copy order by id'), [[2, 'n2'], [3, 'n3'], [4, 'n4']]);
  const other = await e.run(replicationFile('source: LAKE\ntarget: LAKE2\nstreams:\n  d.*:\n    object: \'{stream_schema}.{stream_table}\'\n    select: [id]\n'));
  assert.equal(other.status, 'success', JSON.stringify(other.tasks));
  assert.deepEqual(other.tasks.map((x) => [x.stream_name, x.rows]), [['d.top', 4], ['d.top_copy', 3]]);
  assert.deepEqual(await duckRows(path.join(e.dir, 'lake2.duckdb'), 'select sum(id) from d.top'), [[10]]);
});

test('three streams with threads: 3 all load, into DuckDB (queued on the file actor) and into PostgreSQL (on the pool)', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const file = replicationFile("source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: 'par.{stream_table}'\nstreams:\n  src.t*:\n");
  const r = await e.run(file, { threads: 3 });
  assert.equal(r.status, 'success', JSON.stringify(r.tasks));
  assert.deepEqual(r.tasks.map((x) => [x.stream_name, x.rows]), [['src.t1', 1000], ['src.t2', 2000], ['src.t3', 3000]]);
  assert.deepEqual(await duckRows(e.lake, 'select (select count(*) from par.t1), (select count(*) from par.t2), (select count(*) from par.t3)'), [[1000, 2000, 3000]]);
  const pg = await e.run(replicationFile("source: WAREHOUSE\ntarget: PGTWO\ndefaults:\n  object: 'par.{stream_table}'\nstreams:\n  src.t*:\n"), { threads: 3 });
  assert.equal(pg.status, 'success', JSON.stringify(pg.tasks));
  assert.equal(pg.rows, 6000);
});

test('the password of a connection never appears in a task error or its log', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const r = await e.run(replicationFile(`source: SECRETPG\ntarget: LAKE\nstreams:\n  leak:\n    sql: select '${SECRET}'::int as x\n    object: main.leak\n`));
  assert.equal(r.status, 'error');
  assert.match(r.tasks[0]!.error!, /invalid input syntax for type integer: "\*\*\*"/);
  assert.ok(!JSON.stringify(r).includes(SECRET));
  const broken = await e.run(replicationFile(`source: WAREHOUSE\ntarget: SECRETPG\nstreams:\n  src.people:\n    object: s.x\n    target_options: {pre_sql: "select '${SECRET}'::int"}\n`));
  assert.equal(broken.status, 'error');
  assert.ok(!JSON.stringify(broken).includes(SECRET), JSON.stringify(broken));
});

test('the pipeline step runner: a replication file with the step streams, mode and vars overrides returns the step state', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await writeFile(path.join(e.dir, 'step.yaml'), "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: 'step.{stream_table}'\n  where: id <= ${MAX}\nstreams:\n  src.t*:\n  src.people:\n    disabled: true\n");
  const service = replicationStepService({
    pool: e.pool, lines: e.lines, connections: e.connections, projectRoot: e.dir, execId: '2stepexec0000000000000000000', start: new Date(),
    vars: (n) => (n === 'MAX' ? '100' : undefined), env: () => undefined,
  });
  const lines: string[] = [];
  const r = await service({ file: 'step.yaml', streams: ['src.t1', 'src.t3'], mode: 'truncate', vars: { MAX: 5 } }, { signal: new AbortController().signal, log: (l) => lines.push(l) });
  assert.deepEqual(r, {
    state: {
      status: 'success', rows: 10, bytes: r.state.bytes,
      tasks: [
        { stream_name: 'src.t1', object: 'step.t1', status: 'success', rows: 5, bytes: r.state.tasks[0]!.bytes, error: null },
        { stream_name: 'src.t3', object: 'step.t3', status: 'success', rows: 5, bytes: r.state.tasks[1]!.bytes, error: null },
      ],
    },
  });
  assert.ok(lines.some((l) => l.startsWith('[src.t1] stream src.t1: WAREHOUSE → LAKE step.t1 (truncate)')));
  const fromRunVars = await service({ file: 'step.yaml', streams: ['src.t2'] }, { signal: new AbortController().signal, log: () => {} });
  assert.deepEqual([fromRunVars.state.status, fromRunVars.state.rows], ['success', 100]);
  const bad = await service({ file: 'step.yaml', streams: ['src.t2'], vars: { MAX: 'oops' } }, { signal: new AbortController().signal, log: () => {} });
  assert.equal(bad.state.status, 'error');
  assert.match(bad.failure ?? '', /^src\.t2: .*oops/);
});
