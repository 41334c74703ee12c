/**
 * The run output object of `run` / `test`: one result
 * record per node in DAG order, and the payload with counts, sums and
 * `ok_names`. The CLI prints it with `--json`; a pipeline build step
 * publishes it as `state.<id>`.
 */

export type RunStatus = 'success' | 'error' | 'skipped';

export interface ResultRecord {
  readonly name: string; // full name, plain text
  readonly type: 'model' | 'seed' | 'test';
  readonly mode: string;
  readonly duration: number; // seconds
  readonly status: RunStatus;
  readonly error: string;
  readonly rows: number;
  readonly bytes: number;
}

export interface RunPayload {
  readonly path: string;
  readonly target: string;
  readonly results: readonly ResultRecord[];
  readonly total: number;
  readonly ok: number;
  readonly failed: number;
  readonly skipped: number;
  readonly rows: number;
  readonly bytes: number;
  readonly ok_names: string;
}

export const seconds = (ms: number) => Math.round(ms) / 1000;

export function runPayload(path: string, target: string, results: readonly ResultRecord[]): RunPayload {
  const count = (s: RunStatus) => results.filter((r) => r.status === s).length;
  return {
    path,
    target,
    results,
    total: results.length,
    ok: count('success'),
    failed: count('error'),
    skipped: count('skipped'),
    rows: results.reduce((a, r) => a + r.rows, 0),
    bytes: results.reduce((a, r) => a + r.bytes, 0),
    ok_names: results.filter((r) => r.status === 'success').map((r) => r.name).join(','),
  };
}

/** `build completed with <n> error(s): <t>: <message>; …` (the fatal line's text). */
export function failureSummary(results: readonly ResultRecord[]): string {
  const failed = results.filter((r) => r.status === 'error');
  return `build completed with ${failed.length} error(s): ${failed.map((r) => `${r.name}: ${r.error}`).join('; ')}`;
}
