/**
 * Runs the tasks of one execution through the supervisor actor (the same
 * ready queue as builds: tasks without dependencies, `threads` at a time),
 * recording each task's status, times, rows and live output in the store.
 * A task's work gets an AbortSignal and a line logger; cancellation aborts
 * the signals of running tasks, whose work stops the database statement.
 */
import { EngineError, type SerializedError } from '../../engine/errors.js';
import type { StateStore, ExecutionStatus } from '../../engine/state/store.js';
import { RunActor } from '../run-actor.js';
import type { OutputFeed } from './output-feed.js';

/**
 * What a task's work returns: counters, monitor metrics, a warning that makes
 * the task `warning`, or `skipped` when it had nothing to do.
 */
export interface TaskResult {
  readonly rows: number;
  readonly bytes: number;
  readonly metrics?: Readonly<Record<string, unknown>>;
  readonly warning?: string;
  readonly skipped?: boolean;
}

export interface TaskWork {
  readonly taskId: string;
  readonly streamName: string;
  readonly object: string | null;
  readonly mode: string;
  readonly run: (signal: AbortSignal, log: (line: string) => void) => Promise<TaskResult>;
}

export interface TaskOutcome {
  readonly taskId: string;
  readonly status: ExecutionStatus;
  readonly error: SerializedError | undefined;
  readonly warning: string | undefined;
  readonly rows: number;
  readonly bytes: number;
}

export interface TaskRunHandle {
  readonly done: Promise<TaskOutcome[]>;
  cancel(): void;
}

const now = () => new Date().toISOString();

/**
 * Appends lines to one task's output in order. Lines that arrive while a
 * write is in flight are joined into the next write, so a chatty task costs
 * one store append per round trip (≈0.3 ms on PostgreSQL), not one per line,
 * and the output is still live.
 */
function outputWriter(store: StateStore, execId: string, taskId: string, feed: OutputFeed | undefined) {
  let buffer = '';
  let writing: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    while (buffer !== '') {
      const text = buffer;
      buffer = '';
      // Published once stored: a watcher that reads the stored output and then
      // listens can tell by the offset which chunks it already has.
      if (await store.appendTaskOutput(execId, taskId, text).then(() => true, () => false)) feed?.publish(execId, taskId, text);
    }
    writing = undefined;
  };
  return {
    log: (line: string) => {
      buffer += `${line}\n`;
      writing ??= drain();
    },
    flushed: async () => {
      while (writing) await writing;
    },
  };
}

/** `feed`: where each output line is also published live (the line router's output feed). */
export async function startTasks(store: StateStore, execId: string, tasks: readonly TaskWork[], threads: number, feed?: OutputFeed): Promise<TaskRunHandle> {
  await store.upsertTasks(tasks.map((t) => ({ exec_id: execId, task_id: t.taskId, stream_name: t.streamName, object: t.object, mode: t.mode, status: 'queued' as const })));
  const byId = new Map(tasks.map((t) => [t.taskId, t]));
  const aborts = new Map<string, AbortController>();
  const actor = new RunActor<TaskWork, TaskResult>(
    { nodes: tasks.map((t) => ({ id: t.taskId, deps: [], node: t })), threads, failFast: false },
    {
      execute: async ({ taskId }) => {
        const t = byId.get(taskId)!;
        const ac = new AbortController();
        aborts.set(taskId, ac);
        const out = outputWriter(store, execId, taskId, feed);
        await store.upsertTask({ exec_id: execId, task_id: taskId, stream_name: t.streamName, mode: t.mode, status: 'running', start_time: now() });
        try {
          return await t.run(ac.signal, out.log);
        } catch (err) {
          out.log(ac.signal.aborted ? 'cancelled' : `error: ${err instanceof Error ? err.message : String(err)}`);
          throw err;
        } finally {
          aborts.delete(taskId);
          await out.flushed();
        }
      },
      cancel: ({ taskId }) => aborts.get(taskId)?.abort(),
    },
  );
  actor.events.on('node.finish', (e) => {
    const status = finalStatus(e.status, e.error, e.result);
    void store.upsertTask({
      exec_id: execId,
      task_id: e.id,
      stream_name: e.node.streamName,
      mode: e.node.mode,
      status,
      error: e.error ? e.error.message : (e.result?.warning ?? null),
      end_time: now(),
      rows: e.result?.rows ?? 0,
      bytes: e.result?.bytes ?? 0,
      ...(e.result?.metrics ? { metrics: { ...e.result.metrics } } : {}),
      // A refused write (a fenced cluster daemon, an unreachable store) must not crash the
      // daemon: it surfaces, logged, when the execution's own record is written next.
    }).catch(() => {});
  });
  const done = actor.start().then((result) =>
    result.records.map((r) => ({
      taskId: r.id,
      status: finalStatus(r.status, r.error, r.result),
      error: r.error,
      warning: r.result?.warning,
      rows: r.result?.rows ?? 0,
      bytes: r.result?.bytes ?? 0,
    })),
  );
  return { done, cancel: () => actor.cancel() };
}

function finalStatus(status: string, error: SerializedError | undefined, result: TaskResult | undefined): ExecutionStatus {
  if (status === 'success') return result?.skipped ? 'skipped' : result?.warning ? 'warning' : 'success';
  if (status === 'error') return error?.code === 'cancelled' ? 'cancelled' : 'error';
  return 'cancelled';
}

export function cancelledError(): EngineError {
  return new EngineError('cancelled', 'cancelled');
}
