/**
 * Runs the tasks of one execution through the supervisor actor (the same
 * ready queue as builds: tasks without dependencies, `threads` at a time),
 * recording each task's status, times, rows and live output in the store.
 * A task's work gets an AbortSignal and a line logger; cancellation aborts
 * the signals of running tasks, whose work stops the database statement.
 */
import { EngineError, type SerializedError } from '../../engine/errors.js';
import type { StateStore, ExecutionStatus } from '../../engine/state/store.js';
import { RunActor } from '../runtime.js';

export interface TaskWork {
  readonly taskId: string;
  readonly streamName: string;
  readonly object: string | null;
  readonly mode: string;
  readonly run: (signal: AbortSignal, log: (line: string) => void) => Promise<{ rows: number; bytes: number }>;
}

export interface TaskOutcome {
  readonly taskId: string;
  readonly status: ExecutionStatus;
  readonly error: SerializedError | undefined;
  readonly rows: number;
  readonly bytes: number;
}

export interface TaskRunHandle {
  readonly done: Promise<TaskOutcome[]>;
  cancel(): void;
}

const now = () => new Date().toISOString();

/** Appends lines to one task's output in order (each append awaits the previous one). */
function outputWriter(store: StateStore, execId: string, taskId: string) {
  let chain: Promise<void> = Promise.resolve();
  return {
    log: (line: string) => {
      chain = chain.then(() => store.appendTaskOutput(execId, taskId, `${line}\n`)).catch(() => {});
    },
    flushed: () => chain,
  };
}

export async function startTasks(store: StateStore, execId: string, tasks: readonly TaskWork[], threads: number): Promise<TaskRunHandle> {
  await store.upsertTasks(tasks.map((t) => ({ exec_id: execId, task_id: t.taskId, stream_name: t.streamName, object: t.object, mode: t.mode, status: 'queued' as const })));
  const byId = new Map(tasks.map((t) => [t.taskId, t]));
  const aborts = new Map<string, AbortController>();
  const actor = new RunActor<TaskWork, { rows: number; bytes: number }>(
    { nodes: tasks.map((t) => ({ id: t.taskId, deps: [], node: t })), threads, failFast: false },
    {
      execute: async ({ taskId }) => {
        const t = byId.get(taskId)!;
        const ac = new AbortController();
        aborts.set(taskId, ac);
        const out = outputWriter(store, execId, taskId);
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
    const status: ExecutionStatus = e.status === 'success' ? 'success' : e.status === 'error' ? (e.error?.code === 'cancelled' ? 'cancelled' : 'error') : 'cancelled';
    void store.upsertTask({
      exec_id: execId,
      task_id: e.id,
      stream_name: e.node.streamName,
      mode: e.node.mode,
      status,
      error: e.error ? e.error.message : null,
      end_time: now(),
      rows: e.result?.rows ?? 0,
      bytes: e.result?.bytes ?? 0,
    });
  });
  const done = actor.start().then((result) =>
    result.records.map((r) => ({
      taskId: r.id,
      status: (r.status === 'success' ? 'success' : r.status === 'error' ? (r.error?.code === 'cancelled' ? 'cancelled' : 'error') : 'cancelled') as ExecutionStatus,
      error: r.error,
      rows: r.result?.rows ?? 0,
      bytes: r.result?.bytes ?? 0,
    })),
  );
  return { done, cancel: () => actor.cancel() };
}

export function cancelledError(): EngineError {
  return new EngineError('cancelled', 'cancelled');
}
