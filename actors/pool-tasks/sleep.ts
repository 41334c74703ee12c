/**
 * `sleep`: waits `ms` milliseconds, or fails with a `cancelled` error as soon
 * as the task is cancelled. It is the smallest cancellable task, used to
 * measure pool overhead and to exercise cancellation end to end.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../engine/errors.js';
import type { TaskHandler } from './task-handler.js';

export interface SleepTask {
  readonly type: 'sleep';
  readonly ms: number;
}

export interface SleepResult {
  readonly sleptMs: number;
}

export const sleep: TaskHandler<SleepTask, SleepResult> = async (task, { signal }) => {
  if (!Number.isFinite(task.ms) || task.ms < 0) {
    throw new EngineError('internal', `sleep task: ms must be a non-negative number, got ${JSON.stringify(task.ms)}`);
  }
  const started = performance.now();
  try {
    await delay(task.ms, undefined, { signal });
  } catch (err) {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
    throw err;
  }
  return { sleptMs: performance.now() - started };
};
