// `@name` shorthand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replaceAtNames } from '../engine/sql/at-names.js';

const NODES: Record<string, string> = {
  stg_orders: 'dev_ann.stg_orders',
  'staging.stg_orders': 'dev_ann.stg_orders',
  orders: 'dev_ann."Orders"',
};

function resolve(ref: string): string | undefined {
  return NODES[ref.toLowerCase()];
}

test('replaces @ident and @schema.table and reports the resolved references', () => {
  const result = replaceAtNames('select * from @stg_orders o join @staging.stg_orders s on true join @Orders x on true', resolve);
  assert.equal(
    result.sql,
    'select * from dev_ann.stg_orders o join dev_ann.stg_orders s on true join dev_ann."Orders" x on true',
  );
  assert.deepEqual(result.refs, ['stg_orders', 'staging.stg_orders', 'Orders']);
});

test('a@b, @@var and unresolved names are left alone', () => {
  const sql = "select a@stg_orders, @@stg_orders, @@session.x, @unknown, @staging.unknown from t where email like 'x'";
  const result = replaceAtNames(sql, resolve);
  assert.equal(result.sql, sql);
  assert.deepEqual(result.refs, []);
});

test('strings, quoted identifiers and comments (SQL and Jinja) are protected', () => {
  const sql = [
    "select '@stg_orders' as s, E'\\'@stg_orders' as e, \"@stg_orders\" as q, $$ @stg_orders $$ as d",
    "-- @stg_orders",
    "/* @stg_orders /* nested */ @stg_orders */",
    "{# don't use @stg_orders #}",
    'from @stg_orders',
  ].join('\n');
  const result = replaceAtNames(sql, resolve);
  assert.equal(result.sql, sql.replace(/from @stg_orders$/, 'from dev_ann.stg_orders'));
  assert.deepEqual(result.refs, ['stg_orders']);
});

test('Jinja expressions around @names are kept intact', () => {
  const sql = "select {{ var('x', '@stg_orders') }} from @stg_orders{% if true %} where 1=1{% endif %}";
  assert.equal(
    replaceAtNames(sql, resolve).sql,
    "select {{ var('x', '@stg_orders') }} from dev_ann.stg_orders{% if true %} where 1=1{% endif %}",
  );
});

test('the resolver decides self-references: undefined keeps the text', () => {
  const self = 'stg_orders';
  const result = replaceAtNames('select * from @stg_orders union all select * from @orders', (ref) =>
    ref === self ? undefined : resolve(ref),
  );
  assert.equal(result.sql, 'select * from @stg_orders union all select * from dev_ann."Orders"');
  assert.deepEqual(result.refs, ['orders']);
});

test('a trailing dot or a third part does not extend the reference', () => {
  assert.equal(replaceAtNames('select @stg_orders.', resolve).sql, 'select dev_ann.stg_orders.');
  assert.equal(replaceAtNames('select @staging.stg_orders.id', resolve).sql, 'select dev_ann.stg_orders.id');
});
