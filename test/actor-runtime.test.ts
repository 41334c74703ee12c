/**
 * The run runtime with real asynchronous executors (timers, deferred
 * promises, and the Piscina pool): effects are applied, results come back
 * through the mailbox, events fire in order, and `done` resolves with the
 * final records. Orders are asserted, not wall time.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { EngineError } from '../engine/errors.js';
import { TaskPool } from '../actors/pool.js';
import type { RunNodeInput } from '../actors/run-protocol.js';
import type { TaskRequest } from '../actors/run-actor.js';
import { RunActor } from '../actors/run-actor.js';
import { RemoteTaskError } from '../actors/task-error.js';

type Node = { readonly ms: number };

const node = (id: string, deps: string[] = [], ms = 1): RunNodeInput<Node> => ({ id, deps, node: { ms } });

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Records the event stream as `kind:id[:status]` strings. */
function trace<N, R>(actor: RunActor<N, R>): string[] {
  const log: string[] = [];
  actor.events.on('node.start', (e) => log.push(`start:${e.id}`));
  actor.events.on('node.finish', (e) => log.push(`finish:${e.id}:${e.status}`));
  actor.events.on('run.cancelling', (e) => log.push(`cancelling:${e.running}`));
  actor.events.on('run.finish', (e) => log.push(`run:${e.result.cancelled ? 'cancelled' : 'done'}`));
  return log;
}

describe('run runtime', () => {
  it('runs a DAG on a timer-based executor within the thread limit', async () => {
    let inFlight = 0;
    let peak = 0;
    const actor = new RunActor<Node, { id: string }>(
      { nodes: [node('a', [], 5), node('b', [], 1), node('c', ['a'], 1), node('d', ['b', 'c'], 1), node('e', [], 1)], threads: 2 },
      {
        execute: async ({ taskId, node: n }) => {
          peak = Math.max(peak, ++inFlight);
          await delay(n.ms);
          inFlight--;
          return { id: taskId };
        },
      },
    );
    const log = trace(actor);
    const result = await actor.start();
    assert.equal(peak, 2);
    assert.deepEqual(
      result.records.map((r) => [r.id, r.status, r.result?.id]),
      [
        ['a', 'success', 'a'],
        ['b', 'success', 'b'],
        ['c', 'success', 'c'],
        ['d', 'success', 'd'],
        ['e', 'success', 'e'],
      ],
    );
    assert.equal(log.at(-1), 'run:done');
    for (const id of ['a', 'b', 'c', 'd', 'e']) assert.ok(log.indexOf(`start:${id}`) < log.indexOf(`finish:${id}:success`));
    assert.ok(log.indexOf('finish:c:success') < log.indexOf('start:d'), 'd waited for c');
    for (const r of result.records) assert.ok(r.durationMs >= 0);
  });

  it('starts a node as soon as its own dependencies finish (no level barrier)', async () => {
    const slow = deferred<string>();
    const actor = new RunActor<Node, string>(
      { nodes: [node('fast1'), node('slow'), node('fast2', ['fast1']), node('fast3', ['fast2']), node('slow2', ['slow'])], threads: 2 },
      {
        execute: async ({ taskId }) => {
          if (taskId === 'slow') return slow.promise;
          await delay(1);
          return taskId;
        },
      },
    );
    const log = trace(actor);
    actor.events.on('node.finish', (e) => {
      if (e.id === 'fast3') slow.resolve('slow'); // slow only ends once the whole fast chain has
    });
    const result = await actor.start();
    assert.deepEqual(
      log.filter((l) => l.startsWith('start:')),
      ['start:fast1', 'start:slow', 'start:fast2', 'start:fast3', 'start:slow2'],
    );
    assert.ok(log.indexOf('start:fast3') < log.indexOf('finish:slow:success'));
    assert.deepEqual(result.counts, { success: 5, error: 0, skipped: 0 });
  });

  it('turns thrown errors into error records with their code and skips dependents', async () => {
    const actor = new RunActor<Node, string>(
      { nodes: [node('sync'), node('async'), node('after', ['async'])], threads: 2 },
      {
        execute: (task: TaskRequest<Node>) => {
          if (task.taskId === 'sync') throw new EngineError('node', 'relation "x" does not exist');
          return Promise.reject(new EngineError('node', 'could not drop table s.t', new Error('dependent objects')));
        },
      },
    );
    const result = await actor.start();
    assert.deepEqual(
      result.records.map((r) => [r.id, r.status, r.error?.code, r.error?.message]),
      [
        ['sync', 'error', 'node', 'relation "x" does not exist'],
        ['async', 'error', 'node', 'could not drop table s.t: dependent objects'],
        ['after', 'skipped', undefined, undefined],
      ],
    );
  });

  it('retries errors rebuilt from a worker when they are retryable', async () => {
    const attempts: string[] = [];
    const actor = new RunActor<Node, string>(
      { nodes: [node('a')], threads: 1, maxAttempts: 3 },
      {
        execute: async ({ taskId, attempt }) => {
          attempts.push(`${taskId}#${attempt}`);
          if (attempt < 3) throw new RemoteTaskError({ name: 'SqlError', code: 'connection', message: 'connection reset', retryable: true });
          return 'ok';
        },
      },
    );
    const retries: number[] = [];
    actor.events.on('node.retry', (e) => retries.push(e.attempt));
    const result = await actor.start();
    assert.deepEqual(attempts, ['a#1', 'a#2', 'a#3']);
    assert.deepEqual(retries, [2, 3]);
    assert.equal(result.records[0].status, 'success');
  });

  it('cancels from outside: running tasks are asked to stop and become cancelled, the rest is skipped', async () => {
    const running = new Map<string, (err: Error) => void>();
    const cancelRequests: string[] = [];
    const actor = new RunActor<Node, string>(
      { nodes: [node('a'), node('b'), node('c'), node('d', ['a'])], threads: 2 },
      {
        execute: ({ taskId }) => new Promise<string>((_resolve, reject) => running.set(taskId, reject)),
        cancel: ({ taskId, attempt }) => {
          cancelRequests.push(`${taskId}#${attempt}`);
          // The database stops the query a little later; the task then fails.
          setTimeout(() => running.get(taskId)!(new Error('INTERRUPT Error: Interrupted!')), 2);
        },
      },
    );
    const log = trace(actor);
    actor.events.on('node.start', (e) => {
      if (e.id === 'b') setTimeout(() => actor.cancel(), 1); // SIGINT arrives while a and b run
    });
    const result = await actor.start();
    assert.deepEqual(cancelRequests, ['a#1', 'b#1']);
    assert.deepEqual(
      result.records.map((r) => [r.id, r.status, r.error?.message ?? '']),
      [
        ['a', 'error', 'cancelled'],
        ['b', 'error', 'cancelled'],
        ['c', 'skipped', ''],
        ['d', 'skipped', ''],
      ],
    );
    assert.equal(result.cancelled, true);
    assert.deepEqual(log.slice(0, 3), ['start:a', 'start:b', 'cancelling:2']);
    assert.equal(log.at(-1), 'run:cancelled');
  });

  it('handles a cancel sent from inside an event listener after the current message', async () => {
    const actor = new RunActor<Node, string>(
      { nodes: [node('a'), node('b'), node('c')], threads: 1 },
      { execute: async ({ taskId }) => taskId },
    );
    actor.events.on('node.start', (e) => {
      if (e.id === 'b') actor.cancel();
    });
    const log = trace(actor);
    const result = await actor.start();
    assert.deepEqual(
      result.records.map((r) => `${r.id}:${r.status}`),
      ['a:success', 'b:error', 'c:skipped'],
    );
    assert.ok(log.indexOf('start:b') < log.indexOf('cancelling:1'));
  });

  it('reports a failing canceller as an event and still finishes', async () => {
    const actor = new RunActor<Node, string>(
      { nodes: [node('a')], threads: 1 },
      {
        execute: () => delay(20).then(() => 'late'),
        cancel: () => Promise.reject(new EngineError('connection', 'control connection lost')),
      },
    );
    const failures: string[] = [];
    actor.events.on('cancel.failed', (e) => failures.push(`${e.taskId}: ${e.error.message}`));
    actor.events.on('node.start', () => setTimeout(() => actor.cancel(), 1));
    const result = await actor.start();
    assert.deepEqual(failures, ['a: control connection lost']);
    assert.equal(result.records[0].error?.message, 'cancelled');
  });

  it('rejects done when a listener throws, after the run has settled', async () => {
    const actor = new RunActor<Node, string>({ nodes: [node('a'), node('b')], threads: 1 }, { execute: async ({ taskId }) => taskId });
    let finished = 0;
    actor.events.on('node.start', (e) => {
      if (e.id === 'a') throw new Error('renderer bug');
    });
    actor.events.on('node.finish', () => finished++);
    await assert.rejects(actor.start(), (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.message, 'build run: an event listener failed');
      assert.equal((err.cause as Error).message, 'renderer bug');
      return true;
    });
    assert.equal(finished, 2, 'both nodes still ran');
  });

  it('drives Piscina tasks end to end and cancels them without killing threads', async () => {
    const pool = new TaskPool({ maxThreads: 2, minThreads: 2 });
    try {
      const controllers = new Map<string, AbortController>();
      const actor = new RunActor<Node, { sleptMs: number }>(
        { nodes: [node('quick', [], 1), node('long1', ['quick'], 60_000), node('long2', ['quick'], 60_000), node('never', ['long1'])], threads: 2 },
        {
          execute: ({ taskId, attempt, node: n }) => {
            const controller = new AbortController();
            controllers.set(`${taskId}#${attempt}`, controller);
            return pool.run({ type: 'sleep', ms: n.ms }, { signal: controller.signal });
          },
          cancel: ({ taskId, attempt }) => controllers.get(`${taskId}#${attempt}`)?.abort(),
        },
      );
      let started = 0;
      actor.events.on('node.start', () => {
        if (++started === 3) setTimeout(() => actor.cancel(), 20);
      });
      const result = await actor.start();
      assert.deepEqual(
        result.records.map((r) => [r.id, r.status, r.error?.message ?? '']),
        [
          ['quick', 'success', ''],
          ['long1', 'error', 'cancelled'],
          ['long2', 'error', 'cancelled'],
          ['never', 'skipped', ''],
        ],
      );
      const threads = new Set(pool.threadIds());
      assert.equal(threads.size, 2);
      const pong = await pool.run({ type: 'ping' });
      assert.ok(threads.has(pong.threadId), 'the same threads still serve tasks');
    } finally {
      await pool.destroy();
    }
  });
});
