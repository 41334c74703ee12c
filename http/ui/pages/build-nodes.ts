/**
 * The nodes of a pipeline's `build` step as the execution page shows them:
 * read from the step's published state (the run output object, whose
 * records also carry `start_time` and `thread` — actors/pipeline-services.ts),
 * placed on the step's time line for the Gantt chart, with the figures that
 * say how well the DAG ran in parallel.
 */
import type { JsonObject } from '../../../engine/state/store.js';
import type { GanttBar } from '../charts/gantt.js';

export interface BuildNodeRow extends GanttBar {
  readonly type: string;
  readonly mode: string;
  readonly rows: number;
  readonly error: string;
  /** `+1.25 s` after the step started; '' when it never ran. */
  readonly offset: string;
  /** Sub-project directory (a `-R`-style build over several projects), '' otherwise. */
  readonly project: string;
  /** The thread id as text, '' when unknown. */
  readonly threadText: string;
}

export interface BuildStepNodes {
  readonly stepId: string;
  readonly command: string;
  readonly rows: readonly BuildNodeRow[];
  /** Time line origin (the step's start) and length, ms; absent when no node recorded a start time. */
  readonly span?: { readonly originMs: number; readonly lengthMs: number };
  /** From the step's start to the first node's start, seconds (load, compile, connect). */
  readonly beforeFirst?: number;
  /** Sum of node durations over the time from the first start to the last end (1 = one node at a time). */
  readonly parallelism?: number;
  readonly threads: number;
}

interface StepLike {
  readonly step_id: string;
  readonly type: string;
  readonly start_time: string | null;
  readonly end_time: string | null;
  readonly state: JsonObject | null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const ms = (t: unknown): number | undefined => {
  if (typeof t !== 'string') return undefined;
  const v = Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
};

/** Result records of a run state, with the sub-project they belong to. */
function recordsOf(state: JsonObject): { project: string; record: Record<string, unknown> }[] {
  const base = str(state.path);
  const plain = (list: unknown, project: string) => (Array.isArray(list) ? list.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object' && !Array.isArray(r)).map((record) => ({ project, record })) : []);
  if (!Array.isArray(state.sub_projects)) return plain(state.results, '');
  return state.sub_projects.flatMap((sub) => {
    if (sub === null || typeof sub !== 'object' || Array.isArray(sub)) return [];
    const path = str((sub as JsonObject).path);
    return plain((sub as JsonObject).results, path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path);
  });
}

/** The nodes of one build step, or undefined when it is not a `run`/`test` build with results. */
export function buildStepNodes(step: StepLike): BuildStepNodes | undefined {
  const s = step.state;
  if (step.type !== 'build' || !s || (s.command !== 'run' && s.command !== 'test')) return undefined;
  const records = recordsOf(s);
  if (records.length === 0) return undefined;
  const starts = records.map(({ record }) => ms(record.start_time));
  const known = starts.filter((x): x is number => x !== undefined);
  const stepStart = ms(step.start_time);
  const first = known.length > 0 ? Math.min(...known) : undefined;
  const originMs = first === undefined ? undefined : stepStart !== undefined && stepStart <= first ? stepStart : first;
  const ends = records.map(({ record }, i) => (starts[i] === undefined ? undefined : starts[i]! + num(record.duration) * 1000));
  const lastEnd = Math.max(...ends.filter((x): x is number => x !== undefined), first ?? 0);
  const rows: BuildNodeRow[] = records.map(({ project, record }, i) => {
    const start = starts[i];
    const thread = typeof record.thread === 'number' ? record.thread : null;
    return {
      name: str(record.name),
      project,
      type: str(record.type),
      mode: str(record.mode),
      status: str(record.status),
      rows: num(record.rows),
      error: str(record.error),
      duration: num(record.duration),
      thread,
      threadText: thread === null ? '' : String(thread),
      ...(start !== undefined && originMs !== undefined ? { startMs: start - originMs } : {}),
      offset: start !== undefined && originMs !== undefined ? `+${((start - originMs) / 1000).toFixed(2)} s` : '',
    };
  });
  // Gantt order: by start; nodes that never ran after the others, in DAG order.
  const order = rows.map((r, i) => ({ r, i })).sort((a, b) => (a.r.startMs ?? Infinity) - (b.r.startMs ?? Infinity) || a.i - b.i);
  const busy = rows.reduce((a, r) => a + (r.startMs !== undefined ? r.duration * 1000 : 0), 0);
  const threads = new Set(rows.map((r) => r.thread).filter((t) => t !== null)).size;
  return {
    stepId: step.step_id,
    command: str(s.command),
    rows: order.map((x) => x.r),
    threads,
    ...(originMs !== undefined && first !== undefined
      ? {
          span: { originMs, lengthMs: Math.max(lastEnd, ms(step.end_time) ?? 0) - originMs },
          beforeFirst: (first - originMs) / 1000,
          ...(lastEnd > first ? { parallelism: Math.round((busy / (lastEnd - first)) * 100) / 100 } : {}),
        }
      : {}),
  };
}
