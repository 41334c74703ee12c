/**
 * The task pool on real Piscina worker threads: tasks leave the main thread,
 * worker errors come back as EngineErrors with their code, and cancellation
 * reaches a running handler without killing its thread.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { EngineError } from '../engine/errors.js';
import { TaskPool } from '../actors/pool.js';
import type { PoolTask } from '../actors/pool-tasks/index.js';

describe('task pool', () => {
  let pool: TaskPool;
  const poolErrors: Error[] = [];

  before(() => {
    pool = new TaskPool({ maxThreads: 2, minThreads: 1, onError: (err) => poolErrors.push(err) });
  });
  after(async () => {
    await pool.destroy();
    assert.deepEqual(poolErrors, []);
  });

  it('runs ping on a worker thread, not the main one', async () => {
    const result = await pool.run({ type: 'ping' });
    assert.equal(typeof result.threadId, 'number');
    assert.notEqual(result.threadId, threadId);
  });

  it('rebuilds an error raised in the worker as an EngineError with its code', async () => {
    await assert.rejects(pool.run({ type: 'sleep', ms: -1 }), (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.code, 'internal');
      assert.equal(err.message, 'sleep task: ms must be a non-negative number, got -1');
      return true;
    });
  });

  it('reports an unknown task type with the known types', async () => {
    const bogus: PoolTask = { type: 'no-such-task' };
    await assert.rejects(pool.run(bogus), (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.code, 'internal');
      assert.match(err.message, /^unknown task type 'no-such-task'; known types: .*ping/);
      return true;
    });
  });

  it('cancels a running handler through its AbortSignal and keeps the thread', async () => {
    // One thread only, so the thread that ran the cancelled task is the one that answers next.
    const single = new TaskPool({ maxThreads: 1, minThreads: 1, onError: (err) => poolErrors.push(err) });
    try {
      const first = await single.run({ type: 'ping' });
      const controller = new AbortController();
      const sleeping = single.run({ type: 'sleep', ms: 60_000 }, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(sleeping, (err: unknown) => {
        assert.ok(err instanceof EngineError);
        assert.equal(err.code, 'cancelled');
        assert.equal(err.message, 'cancelled');
        return true;
      });
      const next = await single.run({ type: 'ping' });
      assert.equal(next.threadId, first.threadId, 'the worker thread was not replaced');
    } finally {
      await single.destroy();
    }
  });

  it('cancels a task that is still queued behind busy threads', async () => {
    const blockers = [pool.run({ type: 'sleep', ms: 200 }), pool.run({ type: 'sleep', ms: 200 })];
    const controller = new AbortController();
    const queued = pool.run({ type: 'sleep', ms: 60_000 }, { signal: controller.signal });
    controller.abort();
    await assert.rejects(queued, (err: unknown) => err instanceof EngineError && err.code === 'cancelled');
    await Promise.all(blockers);
  });

  it('cancels a task whose worker thread is still booting when the cancel is sent', async () => {
    // A fresh pool has no thread yet: the cancel notice is posted before any
    // worker listens, and must still reach the task once it starts.
    const cold = new TaskPool({ maxThreads: 1, minThreads: 0, onError: (err) => poolErrors.push(err) });
    try {
      const controller = new AbortController();
      const task = cold.run({ type: 'sleep', ms: 60_000 }, { signal: controller.signal });
      controller.abort();
      await assert.rejects(task, (err: unknown) => err instanceof EngineError && err.code === 'cancelled');
    } finally {
      await cold.destroy();
    }
  });

  it('rejects at once when the signal is already aborted', async () => {
    await assert.rejects(
      pool.run({ type: 'sleep', ms: 10 }, { signal: AbortSignal.abort() }),
      (err: unknown) => err instanceof EngineError && err.code === 'cancelled',
    );
  });
});

describe('task pool niceness (Linux)', { skip: process.platform !== 'linux' ? 'a thread has its own nice value only on Linux' : false }, () => {
  /** Nice values of this process's threads, by thread id (field 19 of /proc/self/task/<tid>/stat). */
  const niceByThread = async (): Promise<Map<number, number>> => {
    const { readdirSync, readFileSync } = await import('node:fs');
    return new Map(readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    }));
  };

  it('workers of a pool with a niceness run at it; the thread that created the pool keeps its own', async () => {
    const before = await niceByThread();
    const pool = new TaskPool({ maxThreads: 1, minThreads: 1, niceness: 7 });
    try {
      await pool.run({ type: 'ping' });
      const after = await niceByThread();
      const started = [...after].filter(([tid]) => !before.has(tid));
      assert.ok(started.some(([, nice]) => nice === 7), `a new thread at nice 7: ${JSON.stringify(started)}`);
      assert.equal(after.get(process.pid), before.get(process.pid), 'the main thread is unchanged');
      assert.equal(after.get(process.pid), 0);
    } finally {
      await pool.destroy();
    }
  });
});
