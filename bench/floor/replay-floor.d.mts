// Types of replay-floor.mjs for the TypeScript suites.
import type { RecordedRun } from '../lib/sql-replay.js';

/** `wallMs`: connecting to the last answer; `executeMs` / `executeCpuMs`: the first node's first statement to the last answer. */
export interface ReplayTimes {
  readonly wallMs: number;
  readonly executeMs: number;
  readonly executeCpuMs: number;
}

export function scheduleDag(deps: readonly (readonly number[])[], concurrency: number, run: (i: number, slot: number) => Promise<void>): Promise<void>;
export function replayPostgres(rec: RecordedRun, threads: number): Promise<ReplayTimes>;
export function replayDuckdb(rec: RecordedRun, file: string): Promise<ReplayTimes>;
