// Types of replay-floor.mjs for the TypeScript suites.
import type { RecordedRun } from '../lib/sql-replay.js';

export function scheduleDag(deps: readonly (readonly number[])[], concurrency: number, run: (i: number, slot: number) => Promise<void>): Promise<void>;
export function replayPostgres(rec: RecordedRun, threads: number): Promise<number>;
export function replayDuckdb(rec: RecordedRun, file: string): Promise<number>;
