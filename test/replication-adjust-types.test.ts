/**
 * `target_options.adjust_column_type: true` on both database targets: after
 * the source's columns widened (integer → bigint, integer → numeric,
 * varchar(3) → text), a load into the existing table widens its columns
 * first; without the option PostgreSQL refuses the rows. Types that are
 * already wide enough are kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareTypes } from '../engine/replication/adjust-column-type.js';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationSuite } from './helpers/replication-env.js';

const ready = replicationSuite('repl_adjust', async (env) => {
  await pgQuery(env.db.url, `create schema src; create schema t;
    create table src.adj (id int, amount int, name varchar(3));
    insert into src.adj values (1, 10, 'abc');`);
});

const file = (target: string, object: string, adjust: boolean) =>
  replicationFile(['source: WAREHOUSE', `target: ${target}`, 'streams:', '  src.adj:', `    object: ${object}`, '    mode: truncate', ...(adjust ? ['    target_options: {adjust_column_type: true}'] : []), ''].join('\n'));

test('compareTypes widens only', () => {
  assert.equal(compareTypes('integer', 'bigint'), 'widen');
  assert.equal(compareTypes('bigint', 'integer'), 'fits');
  assert.equal(compareTypes('INTEGER', 'DECIMAL(10,2)'), 'widen');
  assert.equal(compareTypes('numeric(10,2)', 'numeric(12,2)'), 'widen');
  assert.equal(compareTypes('numeric(12,4)', 'numeric(10,2)'), 'fits');
  assert.equal(compareTypes('character varying(3)', 'text'), 'widen');
  assert.equal(compareTypes('text', 'integer'), 'fits');
  assert.equal(compareTypes('timestamp without time zone', 'timestamptz'), 'widen');
  assert.equal(compareTypes('boolean', 'date'), 'unordered');
});

test('a load into existing tables widens their columns on PostgreSQL and DuckDB; without the option PostgreSQL refuses the rows', async (t) => {
  const e = await ready(t);
  if (!e) return;
  for (const [target, object] of [['PGTWO', 't.adj'], ['LAKE', 'd.adj']] as const) {
    const first = await e.run(file(target, object, false));
    assert.equal(first.status, 'success', JSON.stringify(first.tasks));
  }
  await pgQuery(e.db.url, `alter table src.adj alter column id type bigint, alter column amount type numeric(10,2), alter column name type text;
    insert into src.adj values (3000000000, 12.5, 'longer name');`);
  const refused = await e.run(file('PGTWO', 't.adj', false));
  assert.equal(refused.status, 'error', 'the narrow columns cannot take the new rows');
  for (const [target, object] of [['PGTWO', 't.adj'], ['LAKE', 'd.adj']] as const) {
    const r = await e.run(file(target, object, true));
    assert.equal(r.status, 'success', JSON.stringify(r.tasks));
    assert.equal(r.rows, 2);
    assert.ok(r.log.some((l) => /adjusted column id of .* from (integer|INTEGER) to (bigint|BIGINT)/.test(l)), r.log.join('\n'));
  }
  assert.deepEqual(
    await pgQuery(e.db.url, "select column_name, format_type(atttypid, atttypmod) as type from information_schema.columns c join pg_attribute a on a.attrelid = 't.adj'::regclass and a.attname = c.column_name where table_schema = 't' and table_name = 'adj' order by ordinal_position"),
    [{ column_name: 'id', type: 'bigint' }, { column_name: 'amount', type: 'numeric(10,2)' }, { column_name: 'name', type: 'text' }],
  );
  assert.deepEqual(await pgQuery(e.db.url, 'select id::text, amount::text, name from t.adj order by id'), [{ id: '1', amount: '10.00', name: 'abc' }, { id: '3000000000', amount: '12.50', name: 'longer name' }]);
  assert.deepEqual(await duckRows(e.lake, "select column_name, data_type from information_schema.columns where table_schema = 'd' and table_name = 'adj' order by ordinal_position"), [['id', 'BIGINT'], ['amount', 'DECIMAL(10,2)'], ['name', 'VARCHAR']]);
  assert.deepEqual(await duckRows(e.lake, 'select id::varchar, amount::varchar, name from d.adj order by id'), [['1', '10.00', 'abc'], ['3000000000', '12.50', 'longer name']]);
});
