/**
 * Pool task `bench.task`: one synthetic node of `service bench dag`. It
 * stamps when it started and ended on the worker (on the clock shared by all
 * threads, `performance.timeOrigin + now()`), so the host can tell dispatch
 * and result latency apart from the work itself.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import type { BenchTaskKind } from '../../engine/bench/task-kind.js';
import type { Connection } from '../../engine/connections/connection.js';
import { EngineError } from '../../engine/errors.js';
import type { TaskHandler } from '../pool-tasks/task-handler.js';
import { withCancellableSession } from '../pool-tasks/worker-targets.js';

export interface BenchTask {
  readonly type: 'bench.task';
  readonly work: BenchTaskKind;
  /** With `sql`: where and what to run. */
  readonly connection?: Connection;
  readonly sql?: string;
}

export interface BenchTaskResult {
  /** Absolute ms (shared clock) when the handler began and ended. */
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly threadId: number;
}

const clock = () => performance.timeOrigin + performance.now();

function spin(ms: number, signal: AbortSignal): void {
  const end = performance.now() + ms;
  while (performance.now() < end) if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
}

export const benchTask: TaskHandler<BenchTask, BenchTaskResult> = async (task, { signal }) => {
  const startedAt = clock();
  const work = task.work;
  switch (work.kind) {
    case 'noop':
      break;
    case 'sleep':
      try {
        await delay(work.ms, undefined, { signal });
      } catch (err) {
        if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
        throw err;
      }
      break;
    case 'cpu':
      spin(work.ms, signal);
      break;
    case 'sql': {
      if (!task.connection) throw new EngineError('usage', 'bench task sql: no connection given');
      await withCancellableSession(task.connection, signal, (session) => session.query(task.sql ?? 'select 1'));
      break;
    }
  }
  return { startedAt, finishedAt: clock(), threadId };
};
