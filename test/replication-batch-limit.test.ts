/**
 * `target_options.batch_limit`: a stream whose rows outnumber the limit is
 * loaded in several statements of at most that many rows — COPY statements
 * on a PostgreSQL target (from a PostgreSQL source's text COPY and from a
 * DuckDB source's CSV), INSERTs on a DuckDB target — and every row arrives
 * intact, values with newlines, quotes and commas included. The cutting
 * itself (row-batches.ts) is checked on chunks split at every offset.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Readable } from 'node:stream';
import { RowBatches } from '../engine/replication/row-batches.js';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationSuite } from './helpers/replication-env.js';

const ROWS = 25;

const ready = replicationSuite('repl_batch', async (env) => {
  await pgQuery(env.db.url, `create schema src; create schema t;
    create table src.many (id int primary key, note text);
    insert into src.many select g, case when g % 5 = 0 then E'line one\\nline "two", with comma' else 'row ' || g end from generate_series(1, ${ROWS}) g;`);
});

const file = (source: string, target: string, stream: string, object: string, limit: number | undefined, mode = 'full-refresh') =>
  replicationFile([
    `source: ${source}`, `target: ${target}`, 'streams:', `  ${stream}:`, `    object: ${object}`, `    mode: ${mode}`, ...(mode === 'incremental' ? ['    primary_key: [id]'] : []),
    ...(limit === undefined ? [] : [`    target_options: {batch_limit: ${limit}}`]), '',
  ].join('\n'));

const expected = Array.from({ length: ROWS }, (_, i) => [i + 1, (i + 1) % 5 === 0 ? 'line one\nline "two", with comma' : `row ${i + 1}`]);

test('batch_limit 7 loads 25 rows in 4 statements on PostgreSQL (text and CSV COPY) and DuckDB targets', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const runs: [string, string, string, string, RegExp][] = [
    ['WAREHOUSE', 'PGTWO', 'src.many', 't.many', /loaded 25 rows in 4 COPY statements of at most 7 rows \(batch_limit\)/],
    ['WAREHOUSE', 'LAKE', 'src.many', 'd.many', /loaded 25 rows in 4 INSERT statements of at most 7 rows \(batch_limit\)/],
    ['LAKE', 'PGTWO', 'd.many', 't.from_lake', /loaded 25 rows in 4 COPY statements of at most 7 rows \(batch_limit\)/],
  ];
  for (const [source, target, stream, object, line] of runs) {
    const r = await e.run(file(source, target, stream, object, 7));
    assert.equal(r.status, 'success', `${source} → ${target}: ${JSON.stringify(r.tasks)}`);
    assert.equal(r.rows, ROWS);
    assert.ok(r.log.some((l) => line.test(l)), `${source} → ${target}:\n${r.log.join('\n')}`);
  }
  for (const table of ['t.many', 't.from_lake']) {
    const rows = await pgQuery(e.db.url, `select id, note from ${table} order by id`);
    assert.deepEqual(rows.map((r) => [r.id, r.note]), expected, table);
  }
  assert.deepEqual((await duckRows(e.lake, 'select id, note from d.many order by id')).map(([id, note]) => [Number(id), note]), expected);

  // Merges stage in batches too; a limit above the row count is one statement, no batch line.
  const merged = await e.run(file('WAREHOUSE', 'PGTWO', 'src.many', 't.many', 10, 'incremental'));
  assert.equal(merged.status, 'success', JSON.stringify(merged.tasks));
  assert.ok(merged.log.some((l) => /in 3 COPY statements of at most 10 rows/.test(l)), merged.log.join('\n'));
  const one = await e.run(file('WAREHOUSE', 'PGTWO', 'src.many', 't.many', 1000));
  assert.equal(one.status, 'success');
  assert.ok(!one.log.some((l) => /batch_limit/.test(l)), one.log.join('\n'));
  assert.equal((await pgQuery(e.db.url, 'select count(*)::int as n from t.many'))[0].n, ROWS);
});

async function cut(chunks: (string | Buffer)[], limit: number, csv: boolean): Promise<string[]> {
  const b = new RowBatches(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))), limit, csv);
  const out: string[] = [];
  while (await b.more()) {
    let text = '';
    for await (const part of b.batch()) text += part.toString();
    out.push(text);
  }
  return out;
}

test('RowBatches cuts at row ends only, wherever the chunks split, with CSV quotes holding newlines', async () => {
  const csv = 'a,"x\ny",1\nb,"say ""hi""\n",2\nc,plain,3\nd,"\n\n",4\ne,,5\n';
  const rows = ['a,"x\ny",1\n', 'b,"say ""hi""\n",2\n', 'c,plain,3\n', 'd,"\n\n",4\n', 'e,,5\n'];
  for (let at = 0; at <= csv.length; at++) {
    for (let second = at; second <= csv.length; second += 7) {
      const chunks = [csv.slice(0, at), csv.slice(at, second), csv.slice(second)].filter((c) => c.length > 0);
      assert.deepEqual(await cut(chunks, 2, true), [rows[0]! + rows[1]!, rows[2]! + rows[3]!, rows[4]!], `split at ${at}, ${second}`);
      assert.deepEqual(await cut(chunks, 1, true), rows);
      assert.deepEqual(await cut(chunks, 10, true), [csv]);
    }
  }
  // Text format: every newline ends a row (values carry \n escaped); a last row without a newline is kept.
  assert.deepEqual(await cut(['1\tx\\ny\n2\t', 'b\n3\tc'], 2, false), ['1\tx\\ny\n2\tb\n', '3\tc']);
  assert.deepEqual(await cut([], 5, false), []);
});
