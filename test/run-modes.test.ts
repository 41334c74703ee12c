/**
 * `service build run` end to end on real DuckDB and PostgreSQL (materialization,
 * preparation, A20): every mode twice in a row with exact row counts, the
 * view↔table switch, `--full-refresh`, pre/post statements, and no temp
 * table left behind after a success or a failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { build, writeFiles } from './helpers/build-cli.js';
import { payload, statusRows } from './helpers/run-payload.js';
import { duckWarehouse, pgWarehouse, tempTables, type Warehouse } from './helpers/warehouse.js';

const pgWh = pgWarehouse('run_modes');
before(() => pgWh.setup());
after(() => pgWh.close());

const MODES = {
  'fr.sql': '-- {mode: full-refresh}\nselect 1 as id union all select 2',
  'vw.sql': '-- {mode: view}\nselect 1 as id union all select 2',
  'tr.sql': '-- {mode: truncate}\nselect 1 as id union all select 2',
  'ap.sql': '-- {mode: append}\nselect 1 as id union all select 2',
  'inc.sql': [
    '/**',
    'mode: incremental',
    'unique_key: id',
    'update_key: u',
    '**/',
    'select * from (select 1 as id, 10 as u union all select 2, 20) src where {{ incremental_where_cond() }}',
  ].join('\n'),
};

/** `schema.name` → information_schema table_type, for the relations of `schema`. */
async function kinds(wh: Warehouse, dir: string, schema: string): Promise<Record<string, string>> {
  const rows = await wh.query(dir, `select table_name, table_type from information_schema.tables where table_schema = '${schema}' order by table_name`);
  return Object.fromEntries(rows.map((r) => [r.table_name!, r.table_type!]));
}

async function counts(wh: Warehouse, dir: string, schema: string, names: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = Number((await wh.query(dir, `select count(*) as n from ${schema}.${n}`))[0]!.n);
  return out;
}

for (const wh of [duckWarehouse(), pgWh]) {
  describe(`run on ${wh.kind}`, () => {
    test('every mode, twice in a row, with exact row counts', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project(MODES, 'defaults:\n  schema: modes\n');
      const first = await build('run', dir, ...wh.args, '--json');
      assert.equal(first.code, 0, first.err);
      // DAG order: zero in-degree nodes sorted by name.
      assert.deepEqual(statusRows(first), [
        ['modes.ap', 'success', 2],
        ['modes.fr', 'success', 2],
        ['modes.inc', 'success', 2],
        ['modes.tr', 'success', 2],
        ['modes.vw', 'success', 0],
      ]);
      assert.deepEqual(
        payload(first).results.map((r) => [r.type, r.mode]),
        [['model', 'append'], ['model', 'full-refresh'], ['model', 'incremental'], ['model', 'truncate'], ['model', 'view']],
      );
      assert.deepEqual(await kinds(wh, dir, 'modes'), { ap: 'BASE TABLE', fr: 'BASE TABLE', inc: 'BASE TABLE', tr: 'BASE TABLE', vw: 'VIEW' });

      const second = await build('run', dir, ...wh.args, '--json');
      assert.equal(second.code, 0, second.err);
      // append inserts again; incremental stages nothing past the watermark u > 20.
      assert.deepEqual(statusRows(second), [
        ['modes.ap', 'success', 2],
        ['modes.fr', 'success', 2],
        ['modes.inc', 'success', 0],
        ['modes.tr', 'success', 2],
        ['modes.vw', 'success', 0],
      ]);
      assert.equal(payload(second).rows, 6);
      assert.deepEqual(await counts(wh, dir, 'modes', ['ap', 'fr', 'inc', 'tr', 'vw']), { ap: 4, fr: 2, inc: 2, tr: 2, vw: 2 });
      assert.deepEqual(await tempTables(wh, dir), []);

      // --full-refresh: every selected model is built as full-refresh, the view included.
      const refreshed = await build('run', dir, ...wh.args, '--json', '--full-refresh');
      assert.equal(refreshed.code, 0, refreshed.err);
      assert.deepEqual(
        payload(refreshed).results.map((r) => [r.name, r.mode, r.rows]),
        [['modes.ap', 'full-refresh', 2], ['modes.fr', 'full-refresh', 2], ['modes.inc', 'full-refresh', 2], ['modes.tr', 'full-refresh', 2], ['modes.vw', 'full-refresh', 2]],
      );
      assert.deepEqual(await counts(wh, dir, 'modes', ['ap', 'fr', 'inc', 'tr', 'vw']), { ap: 2, fr: 2, inc: 2, tr: 2, vw: 2 });
      assert.equal((await kinds(wh, dir, 'modes')).vw, 'BASE TABLE');
    });

    test('switching a model between view and table replaces the relation in place', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'sw.sql': '-- {mode: view}\nselect 1 as id' }, 'defaults:\n  schema: switch\n');
      const sequence: [string, string, number][] = [
        ['view', 'VIEW', 0],
        ['full-refresh', 'BASE TABLE', 1],
        ['view', 'VIEW', 0],
        ['truncate', 'BASE TABLE', 1],
        ['view', 'VIEW', 0],
        ['append', 'BASE TABLE', 1],
      ];
      for (const [mode, kind, rows] of sequence) {
        writeFiles(dir, { 'sw.sql': `-- {mode: ${mode}}\nselect 1 as id` });
        const r = await build('run', dir, ...wh.args, '--json');
        assert.equal(r.code, 0, `${mode}: ${r.err}`);
        assert.deepEqual(statusRows(r), [['switch.sw', 'success', rows]], mode);
        assert.deepEqual(await kinds(wh, dir, 'switch'), { sw: kind }, mode);
        assert.deepEqual(await wh.query(dir, 'select id from switch.sw'), [{ id: '1' }], mode);
      }
    });

    test('pre- and post-statements run around the materialization (A20 stmts)', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({
        'audit.sql': [
          'create table if not exists public.audit_log (model varchar, ran_at timestamp);',
          'select 42 as answer;',
          "insert into public.audit_log values ('audit', now());",
        ].join('\n'),
      });
      for (const run of [1, 2]) {
        const r = await build('run', dir, ...wh.args, '--json');
        assert.equal(r.code, 0, r.err);
        assert.deepEqual(statusRows(r), [['public.audit', 'success', 1]]);
        assert.deepEqual(await wh.query(dir, 'select answer from public.audit'), [{ answer: '42' }]);
        assert.deepEqual(await wh.query(dir, 'select count(*) as n, min(model) as m from public.audit_log'), [{ n: String(run), m: 'audit' }]);
      }
      const compiled = await build('compile', dir, '--json');
      assert.equal(compiled.code, 0, compiled.err);
      const node = (JSON.parse(compiled.out) as { nodes: Record<string, unknown>[] }).nodes[0]!;
      assert.deepEqual([(node.pre_statements as unknown[]).length, node.sql, (node.post_statements as unknown[]).length], [1, 'select 42 as answer', 1]);
    });

    test('a failing post-statement fails the model with its statement number', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'bad_post.sql': 'select 1 as id;\ninsert into nowhere_at_all values (1);' }, 'defaults:\n  schema: post\n');
      const r = await build('run', dir, ...wh.args, '--json');
      assert.equal(r.code, 1);
      const rec = payload(r).results[0]!;
      assert.equal(rec.status, 'error');
      assert.match(rec.error, /^post-statement 1 failed for model 'bad_post': /);
    });

    test('no temp table is left behind after a failed incremental merge or full-refresh', async (t) => {
      if (!(await wh.ready(t))) return;
      const inc = (cols: string) =>
        `/**\nmode: incremental\nunique_key: id\nupdate_key: u\n**/\nselect ${cols} from (select 1 as id, 10 as u, 'x' as extra) src where {{ incremental_where_cond() }}`;
      const dir = wh.project({ 'grow.sql': inc('id, u'), 'broken.sql': 'select 1 as id' }, 'defaults:\n  schema: leftovers\n');
      const first = await build('run', dir, ...wh.args, '--json');
      assert.equal(first.code, 0, first.err);
      // Run 2: the staged query gains a column the table lacks (merge fails); broken's CTAS fails.
      writeFiles(dir, { 'grow.sql': inc('id, u + 1 as u, extra'), 'broken.sql': 'select 1 as id from table_that_does_not_exist' });
      const second = await build('run', dir, ...wh.args, '--json');
      assert.equal(second.code, 1);
      assert.deepEqual(
        payload(second).results.map((r) => [r.name, r.status]),
        [['leftovers.broken', 'error'], ['leftovers.grow', 'error']],
      );
      assert.match(payload(second).results[0]!.error, /^could not materialize model 'broken' \(full-refresh\): /);
      assert.match(payload(second).results[1]!.error, /column\(s\) extra not found in leftovers\.grow; run with --full-refresh to rebuild/);
      assert.deepEqual(await tempTables(wh, dir), []);
      assert.deepEqual(await wh.query(dir, 'select id, u from leftovers.grow'), [{ id: '1', u: '10' }], 'target unchanged');
    });
  });
}
