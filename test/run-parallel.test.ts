/**
 * The ready queue has no level barrier: on PostgreSQL with
 * two workers, a chain f1 → f2 → f3 runs to the end while an unrelated slow
 * node is still running. Proved by the order of progress lines, never by
 * durations.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { build, logLines } from './helpers/build-cli.js';
import { pgWarehouse } from './helpers/warehouse.js';

const pgWh = pgWarehouse('run_par');
before(() => pgWh.setup());
after(() => pgWh.close());

test('f2 and f3 start and finish while slow is still running (--threads 2)', async (t) => {
  if (!(await pgWh.ready(t))) return;
  const dir = pgWh.project({
    'slow.sql': 'select 1 as x from (select pg_sleep(2)) s',
    'f1.sql': 'select 1 as x',
    'f2.sql': "select x from {{ ref('f1') }}",
    'f3.sql': "select x from {{ ref('f2') }}",
  });
  const r = await build('run', dir, '--threads', '2');
  assert.equal(r.code, 0, r.err);
  const events = logLines(r.err)
    .map((l) => /\] public\.(\w+) \(full-refresh\) \.+ (START|OK)/.exec(l))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
  const at = (e: string) => {
    const i = events.indexOf(e);
    assert.ok(i >= 0, `${e} missing from:\n${events.join('\n')}`);
    return i;
  };
  // slow is dispatched with f1 (both ready at start), before f2 exists in the queue.
  assert.ok(at('slow START') < at('f2 START'), events.join('\n'));
  for (const e of ['f1 OK', 'f2 START', 'f2 OK', 'f3 START', 'f3 OK']) assert.ok(at(e) < at('slow OK'), `${e} before slow OK:\n${events.join('\n')}`);
  assert.equal(events.length, 8);
  assert.deepEqual(await pgWh.query(dir, 'select x from public.f3'), [{ x: '1' }]);
});
