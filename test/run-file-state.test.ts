/**
 * `service run --state FILE|URL`: the state store is kept
 * between runs, so a local monitor compares with its previous run and raises
 * change events; without it every run is a first run.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { cli, tempDir } from './helpers/build-cli.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('a monitor run twice with --state raises column_added; in memory it does not', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_run_state');
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('create schema shop; create table shop.orders (id int)');
    const dir = tempDir('svc-run-state-');
    writeFileSync(join(dir, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${db.url}\n`);
    const file = join(dir, 'orders.yaml');
    writeFileSync(file, 'connection: WAREHOUSE\nobjects:\n  shop.orders:\n');
    const state = join(tempDir('svc-run-state-db-'), 'state.db');
    const events = (out: string) => JSON.parse(out).tasks.flatMap((x: { metrics: { events: { type: string }[] } }) => x.metrics.events.map((e) => e.type));

    const first = await cli('run', file, '--state', state, '--json');
    assert.equal(first.code, 0, first.err);
    assert.deepEqual(events(first.out), []);
    await c.query('alter table shop.orders add column note text');
    const second = await cli('run', file, `--state=${state}`, '--json');
    assert.equal(second.code, 0, second.err);
    assert.equal(JSON.parse(second.out).status, 'warning');
    assert.deepEqual(events(second.out), ['column_added']);
    // The same file and the same store: one job, two executions kept.
    assert.equal(JSON.parse(second.out).job_id, JSON.parse(first.out).job_id);

    await c.query('alter table shop.orders add column extra int');
    const memory = await cli('run', file, '--json');
    assert.deepEqual(events(memory.out), [], 'without --state every run is a first run');

    const bad = await cli('run', file, '--state');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^error: flag needs an argument: --state/);
    const wrong = await cli('run', file, '--state', 'mysql://x/y');
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, /^fatal: --state "mysql:\/\/x\/y": unsupported SERVICE_STATE location/);
  } finally {
    await c.end();
    await db.drop();
  }
});
