/**
 * An execution's tasks or pipeline steps as the console shows them: one
 * shape for both, with the output cut to its last MiB (a task may keep up to
 * 10 MiB; a page that size helps nobody).
 */
import type { ExecutionRecord, StateStore, StepRecord, TaskRecord } from '../../../engine/state/store.js';

export const SHOWN_OUTPUT_CHARS = 1024 * 1024;

export interface RecordView {
  readonly id: string;
  readonly label: string;
  readonly status: string;
  readonly start_time: string | null;
  readonly end_time: string | null;
  readonly rows: number;
  readonly error: string | null;
  readonly output?: string;
  /** Length of the whole stored output (what live chunks' offsets count against). */
  readonly outputLength?: number;
  /** Set when `output` is only the tail: how much is shown. */
  readonly truncated?: string;
}

function withOutput(base: Omit<RecordView, 'output' | 'outputLength' | 'truncated'>, output: string | undefined): RecordView {
  if (output === undefined) return base;
  const cut = output.length > SHOWN_OUTPUT_CHARS;
  return { ...base, output: cut ? output.slice(-SHOWN_OUTPUT_CHARS) : output, outputLength: output.length, ...(cut ? { truncated: '1 MiB' } : {}) };
}

const taskView = (t: TaskRecord): RecordView =>
  withOutput({ id: t.task_id, label: [t.stream_name, t.object, t.mode].filter((x) => x).join(' · '), status: t.status, start_time: t.start_time, end_time: t.end_time, rows: t.rows, error: t.error }, t.output);

const stepView = (s: StepRecord): RecordView => withOutput({ id: s.step_id, label: s.type, status: s.status, start_time: s.start_time, end_time: s.end_time, rows: 0, error: s.error }, s.output);

export async function executionRecords(store: StateStore, exec: ExecutionRecord, withOutputs: boolean): Promise<RecordView[]> {
  if (exec.job_type === 'pipeline') return (await store.listSteps(exec.exec_id, { excludeOutput: !withOutputs })).map(stepView);
  return (await store.listTasks(exec.exec_id, { excludeOutput: !withOutputs })).map(taskView);
}
