/**
 * The `run` build steps that built one build project, newest first: what
 * the lineage pages lay over the graph (each node's last status) and what a
 * node's page charts (its recent durations and rows). A run is a step of a
 * pipeline of this project whose `build` directory is the project's, with
 * the `run` command; the newest RUNS_PER_JOB executions of each pipeline job
 * are read.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ExecutionRecord, StateStore } from '../../../engine/state/store.js';

/** Recent executions per pipeline job searched for build results. */
export const RUNS_PER_JOB = 10;

export interface BuildRunResult {
  readonly name: string;
  readonly type: string;
  readonly status: string;
  readonly duration: number;
  readonly rows: number;
  readonly start_time?: string;
}

export interface BuildRun {
  readonly exec: ExecutionRecord;
  readonly stepId: string;
  readonly results: readonly BuildRunResult[];
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

export async function buildRuns(store: StateStore, projectId: string, jobIds: readonly string[], root: string): Promise<BuildRun[]> {
  const target = real(root);
  const execs = (await Promise.all(jobIds.map((jobId) => store.listExecutions({ projectId, jobId, order: 'desc', limit: RUNS_PER_JOB })))).flat();
  execs.sort((a, b) => (a.start_time < b.start_time ? 1 : a.start_time > b.start_time ? -1 : 0));
  const runs: BuildRun[] = [];
  for (const exec of execs) {
    const steps = await store.listSteps(exec.exec_id, { excludeOutput: true });
    // The last step of an execution finished last: newest first within it too.
    for (const step of [...steps].reverse()) {
      const s = step.state as { path?: unknown; command?: unknown; results?: unknown } | null;
      if (step.type !== 'build' || !s || typeof s.path !== 'string' || s.command !== 'run' || !Array.isArray(s.results) || real(s.path) !== target) continue;
      const results = (s.results as Record<string, unknown>[]).flatMap((r): BuildRunResult[] =>
        r !== null && typeof r === 'object' && typeof r.name === 'string' && typeof r.status === 'string'
          ? [{ name: r.name, type: String(r.type ?? ''), status: r.status, duration: typeof r.duration === 'number' ? r.duration : 0, rows: typeof r.rows === 'number' ? r.rows : 0, ...(typeof r.start_time === 'string' ? { start_time: r.start_time } : {}) }]
          : [],
      );
      runs.push({ exec, stepId: step.step_id, results });
    }
  }
  return runs;
}
