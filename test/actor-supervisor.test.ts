/**
 * The build-run supervisor as a pure function: messages in, effects out, an
 * injected clock. Order of dispatches and finishes is asserted, never wall
 * time (ready queue, skips, fail-fast, cancellation).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SerializedError } from '../engine/errors.js';
import type { NodeFinishEvent, RunEffect, RunEvent, RunInput, RunMessage, RunNodeInput, RunResult } from '../actors/run-protocol.js';
import type { RunState } from '../actors/supervisor.js';
import { CANCELLED_ERROR, createRun, statusOf, transition, workersOf } from '../actors/supervisor.js';

type Node = { readonly name: string };
type Result = { readonly rows: number; readonly warnings?: readonly string[] };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (!(value instanceof Map)) for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const node = (id: string, deps: string[] = [], extra: Partial<RunNodeInput<Node>> = {}): RunNodeInput<Node> => ({
  id,
  deps,
  node: { name: id },
  ...extra,
});

const failure = (message: string, retryable = false): SerializedError => ({ name: 'SqlError', code: 'node', message, retryable });

/** Drives one run by hand. Each state is frozen before it is handed back, proving the transition never mutates its input. */
class Harness {
  state: RunState<Node, Result>;
  now = 0;
  readonly effects: RunEffect<Node, Result>[] = [];

  constructor(input: RunInput<Node>) {
    this.state = createRun<Node, Result>(input);
  }

  send(message: RunMessage<Result>, at?: number): readonly RunEffect<Node, Result>[] {
    if (at !== undefined) this.now = at;
    const { state, effects } = transition(deepFreeze(this.state), message, this.now);
    this.state = state;
    this.effects.push(...effects);
    return effects;
  }

  start(at = 0) {
    return this.send({ type: 'run.start' }, at);
  }

  attemptOf(id: string): number {
    return this.state.records.toArray().find((r) => r.id === id)!.attempt;
  }

  complete(id: string, at?: number, result: Result = { rows: 1 }) {
    return this.send({ type: 'task.completed', taskId: id, attempt: this.attemptOf(id), result }, at);
  }

  fail(id: string, at?: number, error: SerializedError = failure(`${id} broke`)) {
    return this.send({ type: 'task.failed', taskId: id, attempt: this.attemptOf(id), error }, at);
  }

  get events(): RunEvent<Node, Result>[] {
    return this.effects.flatMap((e) => (e.type === 'emit' ? [e.event] : []));
  }

  get dispatched(): string[] {
    return this.effects.flatMap((e) => (e.type === 'dispatch' ? [e.taskId] : []));
  }

  get finished(): string[] {
    return this.finishes.map((e) => `${e.id}:${e.status}`);
  }

  get finishes(): NodeFinishEvent<Node, Result>[] {
    return this.events.filter((e): e is NodeFinishEvent<Node, Result> => e.type === 'node.finish');
  }

  get result(): RunResult<Node, Result> | undefined {
    const fin = this.events.find((e) => e.type === 'run.finish');
    return fin?.type === 'run.finish' ? fin.result : undefined;
  }

  status(id: string) {
    return statusOf(this.state, id);
  }
}

describe('supervisor: ready queue and threads', () => {
  it('starts roots in DAG order and appends newly ready nodes FIFO', () => {
    const h = new Harness({ nodes: [node('a'), node('b'), node('c'), node('d', ['a'])], threads: 1 });
    h.start();
    assert.deepEqual(h.dispatched, ['a']);
    assert.deepEqual([h.status('b'), h.status('c'), h.status('d')], ['ready', 'ready', 'pending']);
    h.complete('a'); // d becomes ready behind b and c
    h.complete('b');
    h.complete('c');
    h.complete('d');
    assert.deepEqual(h.dispatched, ['a', 'b', 'c', 'd']);
    assert.equal(h.result?.counts.success, 4);
  });

  it('has no level barrier: a fast chain runs to the end while a slow root is still running', () => {
    const h = new Harness({
      nodes: [node('fast1'), node('slow'), node('fast2', ['fast1']), node('fast3', ['fast2']), node('slow2', ['slow'])],
      threads: 2,
    });
    h.start(0);
    assert.deepEqual(h.dispatched, ['fast1', 'slow']);
    h.complete('fast1', 10);
    assert.deepEqual(h.dispatched, ['fast1', 'slow', 'fast2'], 'fast2 starts while slow (same level as fast1) runs');
    h.complete('fast2', 20);
    assert.deepEqual(h.dispatched, ['fast1', 'slow', 'fast2', 'fast3']);
    h.complete('fast3', 30);
    assert.equal(h.status('slow'), 'running');
    h.complete('slow', 100);
    h.complete('slow2', 110);
    assert.deepEqual(h.dispatched, ['fast1', 'slow', 'fast2', 'fast3', 'slow2']);
    assert.deepEqual(h.finished, ['fast1:success', 'fast2:success', 'fast3:success', 'slow:success', 'slow2:success']);
  });

  it('waits only for selected dependencies and never runs more than min(threads, nodes) at once', () => {
    const h = new Harness({ nodes: [node('a', ['unselected']), node('b'), node('c')], threads: 8 });
    assert.equal(workersOf(h.state), 3);
    h.start();
    assert.deepEqual(h.dispatched, ['a', 'b', 'c']);
    assert.equal(h.state.running, 3);
  });

  it('uses 4 workers when threads ≤ 0', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => node(id));
    assert.equal(workersOf(createRun({ nodes, threads: 0 })), 4);
    assert.equal(workersOf(createRun({ nodes, threads: -3 })), 4);
    const h = new Harness({ nodes, threads: 0 });
    h.start();
    assert.deepEqual(h.dispatched, ['a', 'b', 'c', 'd']);
  });

  it('numbers progress lines in dispatch order and measures durations with the injected clock', () => {
    const h = new Harness({ nodes: [node('a'), node('b', ['a'])], threads: 2 });
    h.start(1000);
    h.complete('a', 1250);
    h.complete('b', 1300);
    const starts = h.events.flatMap((e) => (e.type === 'node.start' ? [[e.id, e.index, e.total, e.at]] : []));
    assert.deepEqual(starts, [
      ['a', 1, 2, 1000],
      ['b', 2, 2, 1250],
    ]);
    assert.deepEqual(
      h.finishes.map((f) => [f.id, f.durationMs, f.result]),
      [
        ['a', 250, { rows: 1 }],
        ['b', 50, { rows: 1 }],
      ],
    );
    assert.equal(h.result?.durationMs, 300);
    assert.equal(h.state.phase, 'finished');
  });

  it('finishes an empty selection at once', () => {
    const h = new Harness({ nodes: [], threads: 4 });
    h.start(5);
    assert.deepEqual(h.result, { records: [], counts: { success: 0, error: 0, skipped: 0 }, durationMs: 0, cancelled: false });
  });

  it('rejects a selection that is not in DAG order or repeats an id', () => {
    assert.throws(() => createRun({ nodes: [node('b', ['a']), node('a')], threads: 1 }), /node 'b' depends on 'a', which does not come before it/);
    assert.throws(() => createRun({ nodes: [node('a'), node('a')], threads: 1 }), /duplicate node id 'a'/);
  });
});

describe('supervisor: skips', () => {
  it('skips dependents of a failed node through two levels, even those with another dependency still running', () => {
    const h = new Harness({
      nodes: [node('a'), node('d'), node('b', ['a']), node('c', ['b']), node('e', ['a', 'd'])],
      threads: 2,
    });
    h.start(0);
    h.fail('a', 40);
    assert.equal(h.status('d'), 'running');
    assert.deepEqual(h.finished, ['a:error', 'b:skipped', 'c:skipped', 'e:skipped']);
    h.complete('d', 50);
    assert.deepEqual(h.dispatched, ['a', 'd']);
    const byId = new Map(h.result!.records.map((r) => [r.id, r]));
    assert.deepEqual(byId.get('a')!.error, failure('a broke'));
    assert.equal(byId.get('a')!.durationMs, 40);
    for (const id of ['b', 'c', 'e']) {
      assert.equal(byId.get(id)!.status, 'skipped');
      assert.equal(byId.get(id)!.durationMs, 0);
      assert.equal(byId.get(id)!.error, undefined);
    }
    assert.deepEqual(h.result!.counts, { success: 1, error: 1, skipped: 3 });
    assert.deepEqual(
      h.result!.records.map((r) => r.id),
      ['a', 'd', 'b', 'c', 'e'],
      'records stay in DAG order',
    );
  });

  it('reports preset-skipped seeds without skipping their dependents (--no-seeds, test)', () => {
    const h = new Harness({
      nodes: [node('seed', [], { presetStatus: 'skipped', cascade: false }), node('m', ['seed']), node('n', ['m'])],
      threads: 4,
    });
    h.start();
    assert.deepEqual(h.dispatched, ['m']);
    h.complete('m');
    h.complete('n');
    assert.deepEqual(h.finished, ['seed:skipped', 'm:success', 'n:success']);
    assert.deepEqual(h.result!.counts, { success: 2, error: 0, skipped: 1 });
  });

  it('cascades a preset skip when asked to', () => {
    const h = new Harness({ nodes: [node('s', [], { presetStatus: 'skipped' }), node('m', ['s']), node('x')], threads: 4 });
    h.start();
    assert.deepEqual(h.dispatched, ['x']);
    assert.deepEqual(h.finished, ['s:skipped', 'm:skipped']);
  });

  it('builds the initial ready queue in DAG order even when a preset skip frees a later node', () => {
    const h = new Harness({
      nodes: [node('seed', [], { presetStatus: 'skipped', cascade: false }), node('a'), node('b', ['seed'])],
      threads: 1,
    });
    h.start();
    h.complete('a');
    h.complete('b');
    assert.deepEqual(h.dispatched, ['a', 'b']);
  });
});

describe('supervisor: fail-fast', () => {
  it('stops starting nodes after the first error, lets running ones finish, skips the rest', () => {
    const h = new Harness({ nodes: [node('a'), node('b'), node('c'), node('d', ['b'])], threads: 2, failFast: true });
    h.start();
    assert.deepEqual(h.dispatched, ['a', 'b']);
    h.fail('a');
    assert.equal(h.status('b'), 'running');
    assert.equal(h.status('c'), 'skipped');
    assert.equal(h.status('d'), 'skipped');
    assert.equal(h.result, undefined, 'the run waits for b');
    h.complete('b');
    assert.deepEqual(h.dispatched, ['a', 'b'], 'nothing new started');
    assert.deepEqual(h.finished, ['a:error', 'c:skipped', 'd:skipped', 'b:success']);
    assert.deepEqual(h.result!.counts, { success: 1, error: 1, skipped: 2 });
  });

  it('is not tripped by a success that carries warnings', () => {
    const h = new Harness({ nodes: [node('a'), node('b', ['a'])], threads: 1, failFast: true });
    h.start();
    h.complete('a', 0, { rows: 3, warnings: ['test "x" failed: 2 violating row(s) (severity: warn)'] });
    assert.deepEqual(h.dispatched, ['a', 'b']);
    h.complete('b');
    assert.deepEqual(h.result!.counts, { success: 2, error: 0, skipped: 0 });
    assert.deepEqual(h.result!.records[0].result, { rows: 3, warnings: ['test "x" failed: 2 violating row(s) (severity: warn)'] });
  });

  it('without fail-fast keeps running independent nodes after an error', () => {
    const h = new Harness({ nodes: [node('a'), node('b'), node('c')], threads: 1 });
    h.start();
    h.fail('a');
    h.complete('b');
    h.complete('c');
    assert.deepEqual(h.finished, ['a:error', 'b:success', 'c:success']);
  });
});

describe('supervisor: cancellation', () => {
  it('cancels running tasks, records them as cancelled whatever they report, skips the rest', () => {
    const h = new Harness({ nodes: [node('a'), node('b'), node('c'), node('d', ['a'])], threads: 2 });
    h.start(0);
    const effects = h.send({ type: 'run.cancel' }, 10);
    assert.deepEqual(
      effects.filter((e) => e.type !== 'emit' || e.event.type !== 'node.finish'),
      [
        { type: 'emit', event: { type: 'run.cancelling', running: 2 } },
        { type: 'cancel.task', taskId: 'a', attempt: 1 },
        { type: 'cancel.task', taskId: 'b', attempt: 1 },
      ],
    );
    assert.deepEqual(h.finished, ['c:skipped', 'd:skipped']);
    h.complete('a', 20); // finished before the interrupt landed: still cancelled
    h.fail('b', 30, { name: 'SqlError', code: 'node', message: 'INTERRUPT Error: Interrupted!', retryable: false });
    assert.deepEqual(h.dispatched, ['a', 'b']);
    const records = h.result!.records;
    assert.deepEqual(
      records.map((r) => [r.id, r.status, r.error?.message ?? '']),
      [
        ['a', 'error', 'cancelled'],
        ['b', 'error', 'cancelled'],
        ['c', 'skipped', ''],
        ['d', 'skipped', ''],
      ],
    );
    assert.deepEqual(records[0].error, CANCELLED_ERROR);
    assert.equal(records[0].result, undefined, 'a cancelled node keeps no result (state is never advanced)');
    assert.equal(records[1].durationMs, 30);
    assert.equal(h.result!.cancelled, true);
  });

  it('ignores a second cancel and finishes when the last cancelled task reports', () => {
    const h = new Harness({ nodes: [node('a'), node('b', ['a'])], threads: 1 });
    h.start();
    h.complete('a');
    h.send({ type: 'run.cancel' });
    const before = h.state;
    assert.deepEqual(h.send({ type: 'run.cancel' }), []);
    assert.equal(h.state, before);
    assert.equal(h.result, undefined);
    h.fail('b');
    assert.deepEqual(h.finished, ['a:success', 'b:error']);
    assert.equal(h.result!.records[1].error?.message, 'cancelled');
    assert.equal(h.result!.cancelled, true);
  });

  it('skips everything when cancelled before it started', () => {
    const h = new Harness({ nodes: [node('a'), node('b')], threads: 1 });
    h.send({ type: 'run.cancel' });
    h.start();
    assert.deepEqual(h.dispatched, []);
    assert.deepEqual(h.finished, ['a:skipped', 'b:skipped']);
    assert.equal(h.result!.cancelled, true);
  });
});

describe('supervisor: correlation and retries', () => {
  it('retries a retryable error and drops the late result of the superseded attempt', () => {
    const h = new Harness({ nodes: [node('a'), node('b', ['a'])], threads: 1, maxAttempts: 2 });
    h.start();
    h.send({ type: 'task.failed', taskId: 'a', attempt: 1, error: failure('connection reset', true) });
    assert.equal(h.attemptOf('a'), 2);
    assert.deepEqual(
      h.effects.filter((e) => e.type === 'dispatch').map((e) => e.type === 'dispatch' && [e.taskId, e.attempt]),
      [
        ['a', 1],
        ['a', 2],
      ],
    );
    const before = h.state;
    assert.deepEqual(h.send({ type: 'task.completed', taskId: 'a', attempt: 1, result: { rows: 99 } }), [], 'late attempt 1 dropped');
    assert.equal(h.state, before);
    assert.equal(h.status('a'), 'running');
    h.send({ type: 'task.completed', taskId: 'a', attempt: 2, result: { rows: 5 } });
    assert.equal(h.status('a'), 'success');
    assert.deepEqual(h.state.records.at(0).result, { rows: 5 });
    assert.deepEqual(
      h.events.filter((e) => e.type === 'node.retry').map((e) => e.type === 'node.retry' && [e.id, e.attempt, e.error.message]),
      [['a', 2, 'connection reset']],
    );
  });

  it('does not retry non-retryable errors or beyond maxAttempts', () => {
    const h = new Harness({ nodes: [node('a'), node('b')], threads: 2, maxAttempts: 2 });
    h.start();
    h.fail('a', 0, failure('syntax error'));
    h.fail('b', 0, failure('timeout', true));
    h.fail('b', 0, failure('timeout', true));
    assert.deepEqual(h.finished, ['a:error', 'b:error']);
    assert.equal(h.result!.records[1].attempt, 2);
  });

  it('drops results for unknown tasks, nodes not running, and anything after the run finished', () => {
    const h = new Harness({ nodes: [node('a'), node('b', ['a'])], threads: 1 });
    h.start();
    assert.deepEqual(h.send({ type: 'task.completed', taskId: 'zzz', attempt: 1, result: { rows: 0 } }), []);
    assert.deepEqual(h.send({ type: 'task.completed', taskId: 'b', attempt: 1, result: { rows: 0 } }), [], 'b is not running');
    h.complete('a');
    assert.deepEqual(h.send({ type: 'task.completed', taskId: 'a', attempt: 1, result: { rows: 0 } }), [], 'duplicate');
    h.complete('b');
    const final = h.state;
    assert.deepEqual(h.send({ type: 'task.failed', taskId: 'b', attempt: 1, error: failure('late') }), []);
    assert.deepEqual(h.send({ type: 'run.start' }), []);
    assert.equal(h.state, final);
    assert.equal(h.events.filter((e) => e.type === 'run.finish').length, 1);
  });
});
