// DAG order and cycle errors: Kahn with code-point
// tie-breaks, freed dependents appended in sorted batches, and one cycle per
// strongly connected component in the error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { topoOrder } from '../engine/dag/order.js';
import { EngineError } from '../engine/errors.js';

const deps = (entries: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(entries));

function cycleError(names: string[], edges: Record<string, string[]>): EngineError {
  try {
    topoOrder(names, deps(edges));
  } catch (err) {
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, 'compile');
    return err;
  }
  assert.fail('expected a cycle error');
}

test('project orders as the docs list it', () => {
  const names = ['stg_orders', 'rpt_revenue', 'raw_orders', 'fct_orders', 'dim_customers', 'raw_customers', 'stg_customers'];
  const order = topoOrder(names, deps({
    stg_orders: ['raw_orders'],
    stg_customers: ['raw_customers'],
    fct_orders: ['stg_orders', 'stg_customers'],
    dim_customers: ['stg_customers'],
    rpt_revenue: ['fct_orders'],
  }));
  assert.deepEqual(order, [
    'raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'dim_customers', 'fct_orders', 'rpt_revenue',
  ]);
});

test('ties break by code point on the original-case name (uppercase before lowercase)', () => {
  assert.deepEqual(topoOrder(['b', 'B', 'a', 'A_x', '_z'], new Map()), ['A_x', 'B', '_z', 'a', 'b']);
});

test('freed dependents are appended after the current queue, not merged into it', () => {
  // a frees b, but z was already queued: a, z, b (a priority queue would give a, b, z).
  assert.deepEqual(topoOrder(['z', 'b', 'a'], deps({ b: ['a'] })), ['a', 'z', 'b']);
  // nodes freed by the same pop are sorted among themselves
  assert.deepEqual(topoOrder(['root', 'y', 'x', 'w'], deps({ y: ['root'], x: ['root'], w: ['x'] })), ['root', 'x', 'y', 'w']);
});

test('keys are lower-cased names; results keep the original case', () => {
  const order = topoOrder(['Stg_Orders', 'RAW_orders'], deps({ stg_orders: ['raw_orders'] }));
  assert.deepEqual(order, ['RAW_orders', 'Stg_Orders']);
});

test('dependencies on names outside the set and repeated edges are ignored', () => {
  const order = topoOrder(['b', 'a'], deps({ a: ['b', 'b', 'disabled_model', 'external.table'] }));
  assert.deepEqual(order, ['b', 'a']);
});

test('a 10,000-node chain orders without recursion limits', () => {
  const names = Array.from({ length: 10_000 }, (_, i) => `n${String(i).padStart(5, '0')}`);
  const edges = new Map(names.slice(1).map((n, i) => [n, [names[i]]]));
  assert.deepEqual(topoOrder([...names].reverse(), edges), names);
});

test('one cycle: starts at its smallest name and follows dependencies', () => {
  const err = cycleError(['b', 'a', 'c'], { a: ['b'], b: ['a'], c: ['a'] });
  assert.equal(err.message, 'cycle detected in model dependencies: a -> b -> a');
});

test('two cycles: each reported once, sorted, joined by "; "', () => {
  const err = cycleError(['y', 'x', 'o', 'n', 'm', 'ok', 'after'], {
    x: ['y'], y: ['x'],
    n: ['m'], o: ['n'], m: ['o', 'ok'],
    after: ['x', 'm'],
  });
  assert.equal(err.message, 'cycle detected in model dependencies: m -> o -> n -> m; x -> y -> x');
});

test('a self-reference is a cycle of one', () => {
  assert.equal(cycleError(['a'], { a: ['a'] }).message, 'cycle detected in model dependencies: a -> a');
});

test('the reported cycle takes the smallest next hop and backs out of dead ends', () => {
  // SCC {a,b,c,d}: from b the smallest hop c only leads back to b, so the cycle goes through d.
  const err = cycleError(['a', 'b', 'c', 'd'], { a: ['b'], b: ['c', 'd'], c: ['b'], d: ['a'] });
  assert.equal(err.message, 'cycle detected in model dependencies: a -> b -> d -> a');
  // with a direct edge back to the start available, the cycle closes at once
  const short = cycleError(['a', 'b', 'c'], { a: ['c', 'b'], b: ['c', 'a'], c: ['a'] });
  assert.equal(short.message, 'cycle detected in model dependencies: a -> b -> a');
});

test('cycle names keep their original case and start at the code-point smallest', () => {
  const err = cycleError(['beta', 'Alpha'], { beta: ['alpha'], alpha: ['beta'] });
  assert.equal(err.message, 'cycle detected in model dependencies: Alpha -> beta -> Alpha');
});

test('a 5,000-node ring reports the whole cycle without overflowing the stack', () => {
  const names = Array.from({ length: 5000 }, (_, i) => `n${String(i).padStart(4, '0')}`);
  const edges = new Map(names.map((n, i) => [n, [names[(i + 1) % names.length]]]));
  const err = cycleError(names, Object.fromEntries(edges));
  assert.equal(err.message, `cycle detected in model dependencies: ${[...names, names[0]].join(' -> ')}`);
});
