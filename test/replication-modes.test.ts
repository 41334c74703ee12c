// Replication modes: each mode runs twice with source
// rows changed in between — one row updated with a newer update_key, one
// updated without touching it, one inserted, one deleted — and the target
// holds exactly the expected rows afterwards, on a PostgreSQL target (worker
// path) and a DuckDB target (actor path). Also the run-time mode checks of
// Validation for a mode forced by the job or the run.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationSuite, type ReplicationEnv } from './helpers/replication-env.js';

const ready = replicationSuite('repl_modes');

type Row = [number, string, string, string];

/** Source `src.<table>`: (id, name, amount, updated_at). */
async function seed(e: ReplicationEnv, table: string): Promise<void> {
  await pgQuery(e.db.url, `create schema if not exists src; drop table if exists src.${table};
    create table src.${table} (id int primary key, name text, amount numeric(10,2), updated_at timestamptz);
    insert into src.${table} values
      (1, 'a', 1.10, '2024-01-01 00:00:00+00'), (2, 'b', 2.20, '2024-01-02 00:00:00+00'),
      (3, 'c', 3.30, '2024-01-03 00:00:00+00'), (4, 'd', 4.40, '2024-01-04 00:00:00+00')`);
}

/** Row 2 updated with a newer updated_at, row 3 updated without, row 5 inserted, row 1 deleted. */
async function change(e: ReplicationEnv, table: string): Promise<void> {
  await pgQuery(e.db.url, `update src.${table} set name = 'b2', updated_at = '2024-02-01 00:00:00+00' where id = 2;
    update src.${table} set name = 'c2' where id = 3;
    insert into src.${table} values (5, 'e', 5.50, '2024-02-02 00:00:00+00');
    delete from src.${table} where id = 1`);
}

type Target = 'WAREHOUSE' | 'LAKE';

async function targetRows(e: ReplicationEnv, target: Target, table: string): Promise<Row[]> {
  if (target === 'WAREHOUSE') {
    const rows = await pgQuery(e.db.url, `select id, name, amount::text as amount, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD') as u from ${table} order by id, u, name`);
    return rows.map((r) => [r.id, r.name, r.amount, r.u]);
  }
  const rows = await duckRows(e.lake, `select id, name, CAST(amount AS VARCHAR), strftime(updated_at AT TIME ZONE 'UTC', '%Y-%m-%d') as u from ${table} order by id, u, name`);
  return rows.map((r) => [Number(r[0]), String(r[1]), String(r[2]), String(r[3])]);
}

const A: Row = [1, 'a', '1.10', '2024-01-01'];
const B: Row = [2, 'b', '2.20', '2024-01-02'];
const B2: Row = [2, 'b2', '2.20', '2024-02-01'];
const C: Row = [3, 'c', '3.30', '2024-01-03'];
const C2: Row = [3, 'c2', '3.30', '2024-01-03'];
const D: Row = [4, 'd', '4.40', '2024-01-04'];
const E: Row = [5, 'e', '5.50', '2024-02-02'];

interface ModeCase {
  readonly mode: string;
  readonly settings: string;
  readonly first: Row[];
  readonly second: Row[];
}

const CASES: readonly ModeCase[] = [
  { mode: 'full-refresh', settings: 'mode: full-refresh', first: [A, B, C, D], second: [B2, C2, D, E] },
  { mode: 'truncate', settings: 'mode: truncate', first: [A, B, C, D], second: [B2, C2, D, E] },
  // primary_key + update_key: only rows newer than the target's maximum, upserted (row 3's change is not seen).
  { mode: 'incremental (pk + update_key)', settings: 'mode: incremental\n    primary_key: [id]\n    update_key: updated_at', first: [A, B, C, D], second: [A, B2, C, D, E] },
  // primary_key only: every row read and upserted; deleted rows stay.
  { mode: 'incremental (pk)', settings: 'primary_key: id', first: [A, B, C, D], second: [A, B2, C2, D, E] },
  // update_key only: newer rows appended.
  { mode: 'incremental (update_key)', settings: 'update_key: updated_at', first: [A, B, C, D], second: [A, B, B2, C, D, E] },
  // the range selects by update_key (inclusive) and upserts by primary_key.
  {
    mode: 'backfill',
    settings: "mode: backfill\n    primary_key: [id]\n    update_key: updated_at\n    source_options:\n      range: '2024-01-02,2024-01-03'",
    first: [B, C],
    second: [B, C2],
  },
];

for (const target of ['WAREHOUSE', 'LAKE'] as const) {
  describe(`modes into ${target === 'WAREHOUSE' ? 'PostgreSQL' : 'DuckDB'}`, () => {
    CASES.forEach((c, i) => {
      test(`${c.mode}: two runs with changed source rows`, async (t) => {
        const e = await ready(t);
        if (!e) return;
        const table = `m${i}_${target.toLowerCase()}`;
        await seed(e, table);
        const file = replicationFile(`source: WAREHOUSE\ntarget: ${target}\nstreams:\n  src.${table}:\n    object: tgt.${table}\n    ${c.settings}\n`);
        const first = await e.run(file);
        assert.equal(first.status, 'success', JSON.stringify(first));
        assert.deepEqual(await targetRows(e, target, `tgt.${table}`), c.first);
        await change(e, table);
        const second = await e.run(file);
        assert.equal(second.status, 'success', JSON.stringify(second));
        assert.deepEqual(await targetRows(e, target, `tgt.${table}`), c.second);
      });
    });

    test('snapshot: every run appends all rows with the execution start in _service_loaded_at', async (t) => {
      const e = await ready(t);
      if (!e) return;
      const table = `snap_${target.toLowerCase()}`;
      await seed(e, table);
      const file = replicationFile(`source: WAREHOUSE\ntarget: ${target}\nstreams:\n  src.${table}:\n    object: tgt.${table}\n    mode: snapshot\n`);
      const t1 = new Date('2025-03-01T08:00:00.000Z');
      const t2 = new Date('2025-03-02T08:00:00.000Z');
      assert.equal((await e.run(file, { start: t1 })).status, 'success');
      await change(e, table);
      assert.equal((await e.run(file, { start: t2 })).status, 'success');
      assert.deepEqual(await targetRows(e, target, `tgt.${table}`), [A, B, B2, C, C2, D, D, E]);
      const sql = target === 'WAREHOUSE'
        ? `select to_char(_service_loaded_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') as at, count(*)::int as n from tgt.${table} group by 1 order by 1`
        : `select strftime(_service_loaded_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') as at, count(*) as n from tgt.${table} group by 1 order by 1`;
      const counts = target === 'WAREHOUSE' ? (await pgQuery(e.db.url, sql)).map((r) => [r.at, r.n]) : await duckRows(e.lake, sql);
      assert.deepEqual(counts, [['2025-03-01 08:00', 4], ['2025-03-02 08:00', 4]]);
    });

    test('truncate keeps the target table and its DDL; new source columns are added', async (t) => {
      const e = await ready(t);
      if (!e) return;
      const table = `keep_${target.toLowerCase()}`;
      await seed(e, table);
      const file = replicationFile(`source: WAREHOUSE\ntarget: ${target}\nstreams:\n  src.${table}:\n    object: tgt.${table}\n    mode: truncate\n`);
      assert.equal((await e.run(file)).status, 'success');
      const extra = `alter table tgt.${table} add column note varchar`;
      if (target === 'WAREHOUSE') await pgQuery(e.db.url, extra);
      else await duckRows(e.lake, extra);
      await pgQuery(e.db.url, `alter table src.${table} add column qty int default 7`);
      await change(e, table);
      const second = await e.run(file);
      assert.equal(second.status, 'success', JSON.stringify(second));
      assert.deepEqual(await targetRows(e, target, `tgt.${table}`), [B2, C2, D, E]);
      const cols = target === 'WAREHOUSE'
        ? (await pgQuery(e.db.url, `select column_name from information_schema.columns where table_schema = 'tgt' and table_name = $1 order by ordinal_position`, [table])).map((r) => r.column_name)
        : (await duckRows(e.lake, `select column_name from information_schema.columns where table_schema = 'tgt' and table_name = '${table}' order by ordinal_position`)).map((r) => r[0]);
      assert.deepEqual(cols, ['id', 'name', 'amount', 'updated_at', 'note', 'qty']);
    });
  });
}

test('incremental from DuckDB into PostgreSQL: the watermark of a timestamptz update_key crosses dialects', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await seed(e, 'duck_src');
  const load = replicationFile('source: WAREHOUSE\ntarget: LAKE\nstreams:\n  src.duck_src:\n    object: stage.items\n');
  const back = replicationFile('source: LAKE\ntarget: WAREHOUSE\nstreams:\n  stage.items:\n    object: tgt.from_duck\n    primary_key: [id]\n    update_key: updated_at\n');
  assert.equal((await e.run(load)).status, 'success');
  assert.equal((await e.run(back)).status, 'success');
  assert.deepEqual(await targetRows(e, 'WAREHOUSE', 'tgt.from_duck'), [A, B, C, D]);
  await change(e, 'duck_src');
  assert.equal((await e.run(load)).status, 'success');
  const second = await e.run(back);
  assert.equal(second.status, 'success', JSON.stringify(second));
  assert.equal(second.rows, 2, 'only rows 2 and 5 are newer than the target maximum');
  assert.deepEqual(await targetRows(e, 'WAREHOUSE', 'tgt.from_duck'), [A, B2, C, D, E]);
});

test('merge strategies: delete_insert, insert (new keys only) and update (existing keys only)', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const expected: Record<string, Row[]> = { delete_insert: [A, B2, C2, D, E], insert: [A, B, C, D, E], update: [A, B2, C2, D] };
  for (const [strategy, rows] of Object.entries(expected)) {
    const table = `ms_${strategy}`;
    await seed(e, table);
    const file = replicationFile(`source: WAREHOUSE\ntarget: WAREHOUSE\nstreams:\n  src.${table}:\n    object: tgt.${table}\n    primary_key: [id]\n    target_options: {merge_strategy: ${strategy}}\n`);
    assert.equal((await e.run(file)).status, 'success');
    await change(e, table);
    assert.equal((await e.run(file)).status, 'success');
    assert.deepEqual(await targetRows(e, 'WAREHOUSE', `tgt.${table}`), rows, strategy);
  }
});

test('a mode forced by the job or the run is checked at run time and fails only the streams it does not fit', async (t) => {
  const e = await ready(t);
  if (!e) return;
  await seed(e, 'forced');
  const file = replicationFile('source: WAREHOUSE\ntarget: WAREHOUSE\nstreams:\n  src.forced:\n    object: tgt.forced_a\n  keyed:\n    sql: select * from src.forced\n    object: tgt.forced_b\n    primary_key: [id]\n');
  const r = await e.run(file, { mode: 'incremental' });
  assert.deepEqual(r.tasks.map((x) => [x.stream_name, x.status, x.error]), [
    ['src.forced', 'error', 'mode incremental requires primary_key and/or update_key'],
    ['keyed', 'success', null],
  ]);
  const backfill = await e.run(file, { mode: 'backfill' });
  assert.deepEqual(backfill.tasks.map((x) => x.error), [
    'mode backfill requires primary_key, update_key and source_options.range',
    'mode backfill requires primary_key, update_key and source_options.range',
  ]);
  const files = replicationFile('source: WAREHOUSE\ntarget: FILES\nstreams:\n  src.forced:\n    object: out/forced.csv\n');
  const toFile = await e.run(files, { mode: 'snapshot' });
  assert.equal(toFile.tasks[0]!.error, 'mode snapshot is not supported for file targets');
  const bogus = await e.run(file, { mode: 'merge' });
  assert.equal(bogus.tasks[0]!.error, 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill');
});
