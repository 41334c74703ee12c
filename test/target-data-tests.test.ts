/**
 * Data test queries: exact SQL text and labels, and the violation
 * counts they return on real PostgreSQL and DuckDB through countQuery.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { dataTestExecPrefix, dataTestFailedMessage, dataTestSql, type DataTest } from '../engine/targets/data-test-sql.js';
import { closeDuckdbInstance } from '../engine/targets/duckdb/instance-cache.js';
import { openTarget } from '../engine/targets/index.js';
import type { Relation, TargetSession } from '../engine/targets/target.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const ctx = { source: 'env_var' as const, baseDir: '/', cwd: '/' };
const T: Relation = { schema: 'qa', name: 'orders' };
const P: Relation = { schema: 'qa', name: 'customers' };

test('data test SQL and labels follow the declared kinds exactly', () => {
  assert.deepEqual(dataTestSql({ kind: 'not_null', columns: ['c1', 'c2'] }, T), {
    sql: 'SELECT count(*) FROM "qa"."orders" WHERE "c1" IS NULL OR "c2" IS NULL',
    label: 'not_null(c1, c2)',
  });
  assert.deepEqual(dataTestSql({ kind: 'unique', columns: ['c1', 'c2'] }, T), {
    sql: 'SELECT count(*) FROM (SELECT "c1", "c2" FROM "qa"."orders" GROUP BY "c1", "c2" HAVING count(*) > 1) _service_uniq',
    label: 'unique(c1, c2)',
  });
  assert.deepEqual(dataTestSql({ kind: 'accepted_values', column: 'status', values: ['placed', "it's"] }, T), {
    sql: `SELECT count(*) FROM "qa"."orders" WHERE "status" IS NOT NULL AND "status" NOT IN ('placed', 'it''s')`,
    label: 'accepted_values(status)',
  });
  assert.deepEqual(dataTestSql({ kind: 'expr', expr: 'sum(amount) >= 0' }, T), {
    sql: 'SELECT CASE WHEN (sum(amount) >= 0) THEN 0 ELSE 1 END FROM "qa"."orders"',
    label: 'expr(sum(amount) >= 0)',
  });
  assert.deepEqual(dataTestSql({ kind: 'relationships', column: 'customer_id', to: 'customers', field: 'id' }, T, P), {
    sql: 'SELECT count(*) FROM "qa"."orders" AS child WHERE child."customer_id" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "qa"."customers" AS parent WHERE parent."id" = child."customer_id")',
    label: 'relationships(customer_id -> customers.id)',
  });
  assert.equal(dataTestSql({ kind: 'not_null', columns: ['Weird"Col'] }, { schema: 'A b', name: 'x' }).sql, 'SELECT count(*) FROM "A b"."x" WHERE "Weird""Col" IS NULL');
});

test('data test outcome messages are exact', () => {
  assert.equal(dataTestFailedMessage('customers', 'not_null(email)', 1, 'warn'), `model 'customers' test "not_null(email)" failed: 1 violating row(s) (severity: warn)`);
  assert.equal(dataTestFailedMessage('orders', 'unique(id)', 2, 'error'), `model 'orders' test "unique(id)" failed: 2 violating row(s)`);
  assert.equal(dataTestExecPrefix('orders', 'expr(x)'), `model 'orders' test "expr(x)" failed to execute`);
});

const CASES: readonly { test: DataTest; violations: number }[] = [
  { test: { kind: 'not_null', columns: ['id'] }, violations: 0 },
  { test: { kind: 'not_null', columns: ['customer_id', 'status'] }, violations: 2 },
  { test: { kind: 'unique', columns: ['id'] }, violations: 1 },
  { test: { kind: 'unique', columns: ['customer_id'] }, violations: 1 },
  { test: { kind: 'unique', columns: ['id', 'status'] }, violations: 0 },
  { test: { kind: 'accepted_values', column: 'status', values: ['placed', 'shipped'] }, violations: 1 },
  { test: { kind: 'accepted_values', column: 'status', values: ['placed', 'shipped', 'lost'] }, violations: 0 },
  { test: { kind: 'expr', expr: 'sum(amount) >= 0' }, violations: 0 },
  { test: { kind: 'expr', expr: 'min(amount) > 5' }, violations: 1 },
  { test: { kind: 'relationships', column: 'customer_id', to: 'customers', field: 'id' }, violations: 1 },
];

async function runCases(t: TestContext, s: TargetSession): Promise<void> {
  await s.createSchemas([{ schema: 'qa' }]);
  const opts = { modelName: 'x', runId: 'dtests', dropCascade: false };
  await s.fullRefresh(P, `select * from (values (10), (11)) as v(id)`, opts);
  await s.fullRefresh(
    T,
    `select * from (values (1, 10, 'placed', 5), (2, 10, 'shipped', 7), (2, null, 'lost', 9), (4, 99, null, 1), (5, 11, 'placed', 3)) as v(id, customer_id, status, amount)`,
    opts,
  );
  for (const c of CASES) {
    const q = dataTestSql(c.test, T, P);
    await t.test(`${q.label} finds ${c.violations} violation(s)`, async () => {
      assert.equal(await s.countQuery(q.sql), c.violations);
    });
  }
  await t.test('expr on an empty relation: a row-wise expr passes (no rows), an aggregate still yields one row', async () => {
    await s.fullRefresh({ schema: 'qa', name: 'empty' }, `select 1 as amount where 1 = 0`, opts);
    assert.equal(await s.countQuery(dataTestSql({ kind: 'expr', expr: 'sum(amount) > 0' }, { schema: 'qa', name: 'empty' }).sql), 1, 'aggregate: one row, NULL > 0 is not true');
    assert.equal(await s.countQuery(dataTestSql({ kind: 'expr', expr: 'amount > 0' }, { schema: 'qa', name: 'empty' }).sql), 0);
  });
}

test('postgres data tests', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('target_dtests');
  const target = openTarget(connectionFromUrl('PG', db.url, ctx));
  const s = await target.open();
  t.after(async () => {
    await s.close();
    await target.close();
    await db.drop();
  });
  await runCases(t, s);
});

test('duckdb data tests', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'target-dtests-'));
  const file = join(dir, 'wh.duckdb');
  const s = await openTarget(connectionFromUrl('DUCK', `duckdb://${file}`, ctx)).open();
  t.after(async () => {
    await s.close();
    await closeDuckdbInstance(file);
    await rm(dir, { recursive: true, force: true });
  });
  await runCases(t, s);
});
