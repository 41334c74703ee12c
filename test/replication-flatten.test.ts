/**
 * `source_options.flatten: true` for JSON sources on both database targets:
 * nested objects become columns named by their path (`customer__address__city`),
 * lists stay one column; without it a nested object loads as one JSON column.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationSuite } from './helpers/replication-env.js';

const ready = replicationSuite('repl_flatten', async (env) => {
  await writeFile(path.join(env.files, 'orders.json'), [
    '{"id": 1, "customer": {"name": "Ada", "address": {"city": "London", "zip": "N1"}}, "tags": ["a", "b"]}',
    '{"id": 2, "customer": {"name": "Bo", "address": {"city": "Oslo", "zip": null}}, "tags": []}',
    '',
  ].join('\n'));
});

const file = (target: string, object: string, flatten: boolean) =>
  replicationFile(['source: FILES', `target: ${target}`, 'streams:', '  orders.json:', `    object: ${object}`, ...(flatten ? ['    source_options: {flatten: true}'] : []), ''].join('\n'), { FILES: 'file' });

test('nested JSON objects become columns on PostgreSQL and DuckDB', async (t) => {
  const e = await ready(t);
  if (!e) return;
  for (const [target, object] of [['WAREHOUSE', 'flat.orders'], ['LAKE', 'flat.orders']] as const) {
    const r = await e.run(file(target, object, true));
    assert.equal(r.status, 'success', JSON.stringify(r.tasks));
    assert.equal(r.rows, 2);
    assert.ok(r.log.some((l) => l.includes('flatten: 1 nested column(s) split')), r.log.join('\n'));
  }
  const pgCols = await pgQuery(e.db.url, "select column_name from information_schema.columns where table_schema = 'flat' and table_name = 'orders' order by ordinal_position");
  assert.deepEqual(pgCols.map((c) => c.column_name), ['id', 'customer__name', 'customer__address__city', 'customer__address__zip', 'tags']);
  assert.deepEqual(await pgQuery(e.db.url, 'select id::int, customer__name, customer__address__city, customer__address__zip from flat.orders order by id'), [
    { id: 1, customer__name: 'Ada', customer__address__city: 'London', customer__address__zip: 'N1' },
    { id: 2, customer__name: 'Bo', customer__address__city: 'Oslo', customer__address__zip: null },
  ]);
  assert.deepEqual(await duckRows(e.lake, "select column_name from information_schema.columns where table_schema = 'flat' and table_name = 'orders' order by ordinal_position"), [['id'], ['customer__name'], ['customer__address__city'], ['customer__address__zip'], ['tags']]);
  assert.deepEqual(await duckRows(e.lake, 'select id::int, customer__name, customer__address__city from flat.orders order by id'), [[1, 'Ada', 'London'], [2, 'Bo', 'Oslo']]);
  // Without flatten, the object is one column.
  const plain = await e.run(file('LAKE', 'nested.orders', false));
  assert.equal(plain.status, 'success', JSON.stringify(plain.tasks));
  assert.deepEqual(await duckRows(e.lake, "select column_name from information_schema.columns where table_schema = 'nested' and table_name = 'orders' order by ordinal_position"), [['id'], ['customer'], ['tags']]);
});
