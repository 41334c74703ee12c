/**
 * Failures through `service build run|test` on real databases (data
 * test outcomes, skips and fail-fast, the summary, A10–A13): the skip cascade with its exact payload and
 * text output, fail-fast, data-test severities and relationships, and the
 * `test` command's statuses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { build, logLines, withEnv, writeFiles } from './helpers/build-cli.js';
import { payload, totals } from './helpers/run-payload.js';
import { duckWarehouse, pgWarehouse, tempTables } from './helpers/warehouse.js';

const pgWh = pgWarehouse('run_fail');
before(() => pgWh.setup());
after(() => pgWh.close());

const FAIL = {
  'a.sql': 'select 1 as id',
  'b.sql': 'select * from missing_table',
  'c.sql': "select * from {{ ref('b') }}",
  'd.sql': "select * from {{ ref('a') }}",
};

const QA = {
  'customers.sql': "/**\ntests:\n  - not_null: [email]\n    severity: warn\n  - unique: id\n**/\nselect 1 as id, 'a@x.io' as email union all select 2, null\n",
  'orders.sql': '/**\ntests:\n  - relationships: {column: customer_id, to: customers, field: id}\n**/\nselect 10 as order_id, 1 as customer_id union all select 11, 99\n',
  'summary.sql': 'select count(*) as n from orders\n',
};

const WARN_MSG = `model 'customers' test "not_null(email)" failed: 1 violating row(s) (severity: warn)`;
const REL_MSG = `model 'orders' test "relationships(customer_id -> customers.id)" failed: 1 violating row(s)`;

/** Progress lines without dots, durations and row counts: `INF [1/4] public.a (full-refresh) OK`. */
const progress = (err: string) =>
  logLines(err)
    .map((l) => l.replace(/^\S+ \S+ (?=[A-Z]{3} \[)/, ''))
    .filter((l) => /^[A-Z]{3} \[\d+\/\d+\]/.test(l))
    .map((l) => l.replace(/ \.{3,} /, ' ').replace(/ \((\d+ms|\d+\.\ds)\)( \[\d+ rows?\])?$/, ''));

for (const wh of [duckWarehouse(), pgWh]) {
  describe(`failures on ${wh.kind}`, () => {
    // PostgreSQL shares one database per file: each test writes to its own schema.
    const schemaFor = (s: string) => (wh.kind === 'postgres' ? s : 'public');
    const config = (s: string) => (wh.kind === 'postgres' ? `defaults:\n  schema: ${s}\n` : '');

    test('A10: the failure cascades to dependents only; exact payload, errors block and summary', async (t) => {
      if (!(await wh.ready(t))) return;
      const s = schemaFor('a10');
      const dir = wh.project(FAIL, config('a10'));
      const r = await build('run', dir, ...wh.args, '--json');
      assert.equal(r.code, 1);
      const results = payload(r).results;
      assert.deepEqual(
        results.map((x) => [x.name, x.status, x.rows, x.duration === 0 || x.status !== 'skipped']),
        [[`${s}.a`, 'success', 1, true], [`${s}.b`, 'error', 0, true], [`${s}.d`, 'success', 1, true], [`${s}.c`, 'skipped', 0, true]],
      );
      assert.ok(results[1]!.error.startsWith("could not materialize model 'b' (full-refresh): "), results[1]!.error);
      assert.match(results[1]!.error, /missing_table/);
      assert.deepEqual([results[0]!.error, results[2]!.error, results[3]!.error], ['', '', '']);
      assert.deepEqual(totals(r), { total: 4, ok: 2, failed: 1, skipped: 1, rows: 2, bytes: 0, ok_names: `${s}.a,${s}.d` });
      // The fatal line repeats the error's first line and where it points; the JSON (or the Errors block) holds all of it.
      assert.ok(r.err.includes(`fatal: build execution failed: build completed with 1 error(s): ${s}.b: ${results[1]!.error.split('\n')[0]} (at b.sql:1)\n`), r.err);
      assert.match(results[1]!.error, /\nLINE \d+: select \* from missing_table\n {8,}\^/, 'the statement line the error points at, on both targets');
      assert.deepEqual(progress(r.err), [], 'no progress lines with --json');

      const text = await build('run', dir, ...wh.args);
      assert.equal(text.code, 1);
      const errLines = results[1]!.error.split('\n').map((l) => `      ${l}`);
      assert.equal(text.out, ['Errors:', `  - ${s}.b:`, ...errLines, '      at b.sql:1'].join('\n') + '\n');
      assert.match(text.err, /INF Build Completed in \S+ \| 2 Successes \| 1 Failures \| 1 Skipped\n/);
      const lines = progress(text.err);
      assert.ok(lines.includes(`ERR [2/4] ${s}.b (full-refresh) FAIL`), lines.join('\n'));
      // c is skipped when b fails; whether d was dispatched before that depends on the thread count.
      assert.ok(lines.some((l) => new RegExp(`^INF \\[[34]/4\\] ${s}\\.c \\(full-refresh\\) SKIP$`).test(l)), lines.join('\n'));
      assert.equal(lines.filter((l) => l.includes(`${s}.c`)).length, 1, 'a skipped node prints only SKIP');
      assert.deepEqual(await tempTables(wh, dir), []);
    });

    test('A12: warn severity succeeds with its message, relationships fail, the rewritten bare name skips summary', async (t) => {
      if (!(await wh.ready(t))) return;
      const s = schemaFor('a12');
      const dir = wh.project(QA, config('a12'));
      const r = await build('run', dir, ...wh.args, '--json');
      assert.equal(r.code, 1);
      assert.deepEqual(
        payload(r).results.map((x) => [x.name, x.status, x.error, x.rows]),
        [
          [`${s}.customers`, 'success', WARN_MSG, 2],
          [`${s}.orders`, 'error', REL_MSG, 2],
          [`${s}.summary`, 'skipped', '', 0],
        ],
      );
      assert.deepEqual(totals(r), { total: 3, ok: 1, failed: 1, skipped: 1, rows: 4, bytes: 0, ok_names: `${s}.customers` });
      assert.ok(logLines(r.err).some((l) => l.endsWith(`WRN ${WARN_MSG}`)), r.err);

      const text = await build('run', dir, ...wh.args);
      assert.ok(progress(text.err).includes(`INF [1/3] ${s}.customers (full-refresh) WARN`), text.err);

      // A13 in qa: ok (with the warn text) / fail / skip, exit 1, no table touched.
      writeFiles(dir, { 'customers.sql': QA['customers.sql'].replace("'a@x.io'", "'changed'") });
      const tested = await build('test', dir, ...wh.args, '--json');
      assert.equal(tested.code, 1);
      const entries = JSON.parse(tested.out) as { name: string; type: string; status: string; error: string }[];
      assert.deepEqual(
        entries.map((e) => [e.name, e.type, e.status, e.error]),
        [
          [`${s}.customers`, 'test', 'ok', WARN_MSG],
          [`${s}.orders`, 'test', 'fail', REL_MSG],
          [`${s}.summary`, 'test', 'skip', ''],
        ],
      );
      assert.match(tested.err, /Build Completed in \S+ \| 1 Successes \| 1 Failures \| 1 Skipped\n/);
      assert.deepEqual(await wh.query(dir, `select email from ${s}.customers order by id`), [{ email: 'a@x.io' }, { email: null }]);

      // A failing unique test after a warning: both messages, joined by '; '.
      writeFiles(dir, { 'customers.sql': QA['customers.sql'].replace('union all select 2, null', 'union all select 1, null') });
      const failing = await build('run', dir, ...wh.args, '--json', '-s', 'customers');
      assert.equal(failing.code, 1);
      assert.deepEqual(
        payload(failing).results.map((x) => [x.status, x.error]),
        [['error', `${WARN_MSG}; model 'customers' test "unique(id)" failed: 1 violating row(s)`]],
      );
    });
  });
}

describe('A11 fail-fast on postgres', () => {
  const FF = { 'a.sql': 'select * from missing_table', 'b.sql': 'select 1 as x', 'c.sql': 'select 2 as x' };

  test('-x --threads 1: nothing starts after the first error', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const dir = pgWh.project(FF, 'defaults:\n  schema: a11x\n');
    const r = await build('run', dir, '-x', '--threads', '1', '--json');
    assert.equal(r.code, 1);
    assert.deepEqual(
      payload(r).results.map((x) => [x.name, x.status, x.error === '']),
      [['a11x.a', 'error', false], ['a11x.b', 'skipped', true], ['a11x.c', 'skipped', true]],
    );
    assert.deepEqual([payload(r).failed, payload(r).skipped], [1, 2]);
    assert.deepEqual(await pgWh.query(dir, "select table_name from information_schema.tables where table_schema = 'a11x'"), []);
  });

  test('without -x the independent nodes still run', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const dir = pgWh.project(FF, 'defaults:\n  schema: a11\n');
    const r = await build('run', dir, '--threads', '1', '--json');
    assert.equal(r.code, 1);
    assert.deepEqual(
      payload(r).results.map((x) => [x.name, x.status]),
      [['a11.a', 'error'], ['a11.b', 'success'], ['a11.c', 'success']],
    );
  });
});

describe('before scheduling', () => {
  test('connection errors are fatal, unwrapped, with nothing on stdout even with --json', async () => {
    const dir = pgWh.project({ 'a.sql': 'select 1 as id' });
    const missing = await withEnv({ PG: undefined }, () => build('run', dir, '--json'));
    assert.deepEqual(missing, { code: 1, out: '', err: "fatal: connection 'PG' not found\n" });
    const unreachable = await withEnv({ PG: 'postgresql://postgres@127.0.0.1:5432/service_no_such_database' }, () => build('run', dir, '--json'));
    assert.deepEqual(unreachable, { code: 1, out: '', err: `fatal: could not connect to 'PG': database "service_no_such_database" does not exist\n` });
  });

  test('--no-seeds reports seeds skipped without skipping dependents, and creates no schema for them', async () => {
    const duck = duckWarehouse();
    const dir = duck.project({ 'raw.csv': 'id\n1\n', 'lake/x.csv': 'a\n1\n', 'm.sql': 'select 1 as id', 'n.sql': "select * from {{ ref('m') }} where id not in (select id from {{ ref('raw') }})" });
    const r = await build('run', dir, '--no-seeds', '--json');
    assert.equal(r.code, 1, r.err);
    assert.deepEqual(
      payload(r).results.map((x) => [x.name, x.status]),
      [['public.m', 'success'], ['public.raw', 'skipped'], ['lake.x', 'skipped'], ['public.n', 'error']],
    );
    assert.match(payload(r).results[3]!.error, /raw/, 'n ran (and failed on the missing seed table) instead of being skipped');
    assert.deepEqual(await duck.query(dir, "select schema_name from information_schema.schemata where schema_name = 'lake'"), []);
  });
});
