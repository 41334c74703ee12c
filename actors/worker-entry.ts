/**
 * Piscina worker entry: runs one task envelope by dispatching on the task's
 * `type` to the handler table, and turns every failure into a serialized
 * error in the outcome. Cancel notices arrive on the pool's BroadcastChannel;
 * a notice can overtake the task itself (the task still queued in Piscina), so
 * ids not running here are remembered for a while and honoured on start.
 */
import { setPriority } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { workerData } from 'piscina';
import { EngineError, serializeError } from '../engine/errors.js';
import type { ChannelMessage, PoolWorkerData, TaskEnvelope, TaskOutcome } from './pool-protocol.js';
import { isRetryable } from './task-error.js';
import { handlerFor, taskTypes } from './pool-tasks/index.js';
import { takeLinesPosted, type LogRoute } from './pool-tasks/forwarding-logger.js';

/** Cancel notices for tasks not (yet) running here; every worker sees every notice, so keep few. */
const EARLY_CANCEL_LIMIT = 1024;

const running = new Map<number, AbortController>();
const cancelledEarly = new Set<number>();

const { cancelChannel, preload, niceness } = workerData as PoolWorkerData;
// On Linux a thread has its own nice value and setpriority(pid 0) sets the calling thread's
// (elsewhere it would be the whole process's, the thread serving requests included).
if (niceness !== 0 && process.platform === 'linux') {
  try {
    setPriority(0, niceness);
  } catch {
    // not permitted here: the work runs at the process's priority
  }
}
const channel = new BroadcastChannel(cancelChannel);
channel.unref();
channel.onmessage = (event: unknown) => {
  const notice = (event as { data: ChannelMessage }).data;
  if (notice?.type !== 'task.cancel') return;
  const controller = running.get(notice.taskId);
  if (controller) {
    controller.abort(cancelled());
    return;
  }
  cancelledEarly.add(notice.taskId);
  if (cancelledEarly.size > EARLY_CANCEL_LIMIT) cancelledEarly.delete(cancelledEarly.values().next().value as number);
};
// Listening from here on: cancels posted while this thread booted are posted again (pool-protocol.ts).
channel.postMessage({ type: 'worker.ready' } satisfies ChannelMessage);

// Handlers the pool will need first load now, while no task is waiting; a failure shows on the first task.
for (const type of preload) handlerFor(type).catch(() => {});

function cancelled(): EngineError {
  return new EngineError('cancelled', 'cancelled');
}

export default async function runTask(envelope: TaskEnvelope): Promise<TaskOutcome> {
  const { taskId, task } = envelope;
  const route = (task as { log?: LogRoute }).log;
  const outcome = await run(taskId, task);
  return route ? { ...outcome, logLines: takeLinesPosted(route) } : outcome;
}

async function run(taskId: number, task: TaskEnvelope['task']): Promise<TaskOutcome> {
  const handler = await handlerFor(task.type);
  if (!handler) {
    const known = taskTypes().join(', ');
    return { ok: false, error: serializeError(new EngineError('internal', `unknown task type '${task.type}'; known types: ${known}`)) };
  }
  const controller = new AbortController();
  if (cancelledEarly.delete(taskId)) return { ok: false, error: serializeError(cancelled()) };
  running.set(taskId, controller);
  try {
    const value = await handler(task, { taskId, signal: controller.signal });
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: serializeError(err, isRetryable(err)) };
  } finally {
    running.delete(taskId);
  }
}
