// Table reference detection and rewriting and name rendering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findTableRefs, renderName, rewriteTableRefs, type TableRef } from '../engine/sql/rewrite-refs.js';

/** Prod name → dev name, as the compiler would resolve nodes in dev mode with dev schema dev_ann. */
const NODES: Record<string, readonly string[]> = {
  stg_orders: ['dev_ann', 'stg_orders'],
  'staging.stg_orders': ['dev_ann', 'stg_orders'],
  stg_customers: ['dev_ann', 'stg_customers'],
  'staging.stg_customers': ['dev_ann', 'stg_customers'],
  orders: ['dev_ann', 'Orders'],
  'public.orders': ['dev_ann', 'Orders'],
};

function devResolve(ref: TableRef): readonly string[] | undefined {
  return NODES[ref.parts.join('.').toLowerCase()];
}

function rewrite(sql: string): string {
  return rewriteTableRefs(sql, devResolve).sql;
}

function refTexts(sql: string): string[] {
  return findTableRefs(sql).map((r) => r.parts.join('.'));
}

test('renderName: bare lower-case parts, quoted otherwise, quotes doubled', () => {
  assert.equal(renderName(['public', 'raw'], false), 'public.raw');
  assert.equal(renderName(['public', 'Orders'], false), 'public."Orders"');
  assert.equal(renderName(['lake', 'my schema', '1st'], false), 'lake."my schema"."1st"');
  assert.equal(renderName(['s', 'a"b'], false), 's."a""b"');
  assert.equal(renderName(['dev_ann', 'stg_orders'], true), '"dev_ann"."stg_orders"');
});

test('rewrites FROM and JOIN references, bare and schema-qualified, keeping aliases', () => {
  const sql = 'select * from stg_orders o join staging.stg_customers c on o.customer_id = c.id';
  const result = rewriteTableRefs(sql, devResolve);
  assert.equal(result.sql, 'select * from dev_ann.stg_orders o join dev_ann.stg_customers c on o.customer_id = c.id');
  assert.deepEqual(
    result.rewritten.map((r) => ({ parts: r.parts, quoted: r.quoted, text: sql.slice(r.start, r.end) })),
    [
      { parts: ['stg_orders'], quoted: false, text: 'stg_orders' },
      { parts: ['staging', 'stg_customers'], quoted: false, text: 'staging.stg_customers' },
    ],
  );
});

test('matching is the resolver\'s job: unknown references stay and are not reported', () => {
  const result = rewriteTableRefs('select * from raw.events e join STAGING.STG_ORDERS s using (id)', devResolve);
  assert.equal(result.sql, 'select * from raw.events e join dev_ann.stg_orders s using (id)');
  assert.deepEqual(result.rewritten.map((r) => r.parts), [['STAGING', 'STG_ORDERS']]);
});

test('join modifiers: LEFT OUTER, NATURAL, CROSS, FULL, INNER, RIGHT, LATERAL', () => {
  assert.equal(
    rewrite('select * from stg_orders left outer join stg_customers on true'),
    'select * from dev_ann.stg_orders left outer join dev_ann.stg_customers on true',
  );
  assert.deepEqual(
    refTexts('select * from a natural join b cross join c full outer join d on 1=1 inner join e on 1=1 right join f on 1=1'),
    ['a', 'b', 'c', 'd', 'e', 'f'],
  );
  assert.deepEqual(refTexts('select * from a join lateral (select * from b where b.x = a.x) l on true'), ['a', 'b']);
  assert.deepEqual(refTexts('select * from a cross join lateral unnest(a.xs) as u(x)'), ['a']);
});

test('quoted references: any quoted part quotes every part of the replacement', () => {
  assert.equal(rewrite('select * from "Orders"'), 'select * from "dev_ann"."Orders"');
  assert.equal(rewrite('select * from "staging"."stg_orders" s'), 'select * from "dev_ann"."stg_orders" s');
  assert.equal(rewrite('select * from staging."stg_orders"'), 'select * from "dev_ann"."stg_orders"');
  assert.deepEqual(findTableRefs('select * from "we""ird"."T"')[0].parts, ['we"ird', 'T']);
});

test('three-part names are references; four parts are not', () => {
  assert.deepEqual(refTexts('select * from lake.staging.x join a.b.c.d on true'), ['lake.staging.x']);
  const [ref] = findTableRefs('select * from lake.staging.x');
  assert.deepEqual({ start: ref.start, end: ref.end, quoted: ref.quoted }, { start: 14, end: 28, quoted: false });
});

test('CTE names are never references, including RECURSIVE, column lists and later CTEs', () => {
  const sql = [
    'with recursive stg_orders(id, n) as (select id, 1 from staging.stg_orders),',
    '  stg_customers as materialized (select * from staging.stg_customers),',
    '  "Orders" as (select 1)',
    'select * from stg_orders join stg_customers using (id) join "orders" on true join orders on true',
  ].join('\n');
  assert.deepEqual(refTexts(sql), ['staging.stg_orders', 'staging.stg_customers']);
  assert.equal(
    rewrite(sql),
    sql.replace('from staging.stg_orders', 'from dev_ann.stg_orders').replace('from staging.stg_customers', 'from dev_ann.stg_customers'),
  );
});

test('strings and comments are never rewritten', () => {
  const sql = "select 'from stg_orders' as s -- from stg_orders\n/* join stg_orders */ from $$ from stg_orders $$ x, stg_orders";
  assert.equal(rewrite(sql), sql.replace(/stg_orders$/, 'dev_ann.stg_orders'));
});

test('subqueries, keywords and function calls after FROM are not table references', () => {
  assert.deepEqual(refTexts('select * from (select * from stg_orders) s'), ['stg_orders']);
  assert.equal(rewrite('select * from (select 1) s'), 'select * from (select 1) s');
  assert.deepEqual(refTexts('select * from generate_series(1,3) g'), []);
  assert.deepEqual(refTexts('select * from unnest(array[1,2]) u, pg_catalog.generate_series(1, 2) g'), []);
  assert.deepEqual(refTexts("select * from read_csv('x.csv')"), []);
  assert.deepEqual(refTexts('select * from lateral (select 1) l'), []);
  assert.deepEqual(refTexts("copy t from 'file.csv'"), []);
  assert.deepEqual(refTexts('select * from (values (1), (2)) v(x)'), []);
  assert.deepEqual(refTexts('delete from only stg_orders'), ['stg_orders']);
  // A parenthesised join starts with a table reference.
  assert.deepEqual(refTexts('select * from ((stg_orders o join orders r using (id)) left join raw w using (id))'), [
    'stg_orders',
    'orders',
    'raw',
  ]);
});

test('FROM as an argument separator or in IS DISTINCT FROM is not a table clause', () => {
  const sql =
    'select extract(year from created_at), substring(name from 2 for 3), trim(both from code), ' +
    'a is distinct from orders from stg_orders';
  assert.deepEqual(refTexts(sql), ['stg_orders']);
});

test('comma-separated FROM lists: every item is a reference, in text order', () => {
  const sql = 'select * from stg_orders o, (select * from orders) x, staging.stg_customers as c(id, n), generate_series(1, 2) g, raw';
  assert.deepEqual(refTexts(sql), ['stg_orders', 'orders', 'staging.stg_customers', 'raw']);
  assert.equal(
    rewrite(sql),
    'select * from dev_ann.stg_orders o, (select * from dev_ann."Orders") x, dev_ann.stg_customers as c(id, n), generate_series(1, 2) g, raw',
  );
  // A comma after a join condition starts another item.
  assert.deepEqual(refTexts('select * from a join b on a.id = b.id and a.k in (1, 2), c cross join d, e'), ['a', 'b', 'c', 'd', 'e']);
  // The list ends at the first clause keyword, a closing parenthesis or a semicolon.
  assert.deepEqual(refTexts('select * from a where x in (1, 2) group by a, b'), ['a']);
  assert.deepEqual(refTexts('from a select x, y'), ['a']);
  assert.deepEqual(refTexts('select (select max(v) from a), w from b order by w, v; select 1, 2'), ['a', 'b']);
  assert.deepEqual(
    refTexts('insert into t select * from a on conflict (id) do update set x = excluded.x, y = excluded.y'),
    ['a'],
  );
  assert.deepEqual(refTexts('select * from unnest(xs) with ordinality as u(x, n), a'), ['a']);
});

test('references are found in every statement of a multi-statement body', () => {
  const sql = 'delete from stg_orders where false;\nselect * from stg_orders;\ninsert into audit select * from orders';
  assert.equal(
    rewrite(sql),
    'delete from dev_ann.stg_orders where false;\nselect * from dev_ann.stg_orders;\ninsert into audit select * from dev_ann."Orders"',
  );
});

test('resolver returning undefined (self-reference, unknown) leaves the text untouched', () => {
  const sql = 'select * from stg_orders';
  const result = rewriteTableRefs(sql, () => undefined);
  assert.equal(result.sql, sql);
  assert.deepEqual(result.rewritten, []);
});
