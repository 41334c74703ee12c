/**
 * Fewer round trips per model: a run reads the catalog of
 * its schemas once and tells each model what its relation is, and a
 * PostgreSQL full-refresh whose relation is known is one round trip (CTAS
 * and swap in one multi-statement transaction). Round trips are counted at
 * the driver (`pg.Client#query`) against a real PostgreSQL database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { runCatalog } from '../engine/build-plan/run-catalog.js';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { openTarget } from '../engine/targets/index.js';
import type { Target, TargetSession } from '../engine/targets/target.js';
import { createTempDatabase, requirePg, type TempDatabase } from './helpers/pg.js';

describe('runCatalog', () => {
  const catalog = runCatalog(
    [
      { schema: 'mart', name: 'orders', kind: 'table' },
      { schema: 'mart', name: 'daily', kind: 'view' },
      { database: 'other', schema: 'mart', name: 'far', kind: 'table' },
    ],
    [{ schema: 'mart' }],
  );
  it('knows the kind of every relation in a schema it read, and that others there are missing', () => {
    assert.equal(catalog.kindOf({ schema: 'mart', name: 'orders' }), 'table');
    assert.equal(catalog.kindOf({ schema: 'mart', name: 'daily' }), 'view');
    assert.equal(catalog.kindOf({ schema: 'mart', name: 'new_one' }), null);
  });
  it('knows nothing of schemas it did not read, nor of relations naming a catalog', () => {
    assert.equal(catalog.kindOf({ schema: 'staging', name: 'orders' }), undefined);
    assert.equal(catalog.kindOf({ database: 'other', schema: 'mart', name: 'far' }), undefined);
  });
});

describe('PostgreSQL full-refresh round trips', () => {
  let db: TempDatabase | undefined;
  let target: Target | undefined;
  let session: TargetSession | undefined;
  before(async () => {
    try {
      db = await createTempDatabase('run_catalog');
    } catch {
      return; // requirePg reports it (and fails under CI)
    }
    target = openTarget(connectionFromUrl('PG', db.url, { source: 'env_var', baseDir: '/', cwd: '/' }));
    session = await target.open();
  });
  after(async () => {
    await session?.close();
    await target?.close();
    await db?.drop();
  });

  /** Client#query calls made while `work` runs. */
  async function roundTrips(work: () => Promise<unknown>): Promise<number> {
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    let n = 0;
    proto.query = function (this: unknown, ...args: unknown[]) {
      n++;
      return original.apply(this, args);
    };
    try {
      await work();
    } finally {
      proto.query = original;
    }
    return n;
  }

  const ready = async (t: TestContext) => (await requirePg(t)) && session !== undefined;
  const T = { schema: 'mart', name: 'orders' };
  const opts = { modelName: 'orders', runId: 'rtrips', dropCascade: false };
  const Q = 'select * from (values (1), (2), (3)) as v(id)';

  it('reads the catalog of the run\'s schemas in one query', async (t) => {
    if (!(await ready(t))) return;
    await session!.createSchemas([{ schema: 'mart' }]);
    await session!.fullRefresh(T, Q, opts);
    await session!.view({ schema: 'mart', name: 'v' }, 'select 1 as x', { ...opts, modelName: 'v' });
    let entries: Awaited<ReturnType<TargetSession['catalog']>> = [];
    assert.equal(await roundTrips(async () => (entries = await session!.catalog([{ schema: 'mart' }, { schema: 'nothing_here' }]))), 1);
    assert.deepEqual([...entries].sort((a, b) => a.name.localeCompare(b.name)), [
      { schema: 'mart', name: 'orders', kind: 'table' },
      { schema: 'mart', name: 'v', kind: 'view' },
    ]);
  });

  it('a known relation is rebuilt in one round trip, an unknown one in two (the lookup)', async (t) => {
    if (!(await ready(t))) return;
    await session!.createSchemas([{ schema: 'mart' }]);
    assert.equal(await roundTrips(() => session!.fullRefresh(T, Q, { ...opts, existing: 'table' })), 1);
    assert.equal(await roundTrips(() => session!.fullRefresh(T, Q, opts)), 2);
    const rows = await session!.query('select count(*)::int from mart.orders');
    assert.deepEqual(rows.rows, [[3]]);
    const temps = await session!.query("select count(*)::int from information_schema.tables where table_name like '_service_tmp_%'");
    assert.deepEqual(temps.rows, [[0]], 'no temp table is left');
  });

  it('a relation the catalog missed (a view where it said nothing) still ends as the new table', async (t) => {
    if (!(await ready(t))) return;
    await session!.createSchemas([{ schema: 'mart' }]);
    await session!.view({ schema: 'mart', name: 'stale' }, 'select 1 as id', { ...opts, modelName: 'stale' });
    assert.deepEqual(await session!.fullRefresh({ schema: 'mart', name: 'stale' }, Q, { ...opts, modelName: 'stale', existing: null }), { rows: 3 });
    assert.equal(await session!.relationKind({ schema: 'mart', name: 'stale' }), 'table');
  });
});
