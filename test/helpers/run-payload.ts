/**
 * Reading `service build run|test --json` payloads in tests (the run and
 * test payloads): the parsed payload, and its records without durations (which
 * tests never compare).
 */
import { json, type CliResult } from './build-cli.js';

export interface RunRecord {
  readonly name: string;
  readonly type: string;
  readonly mode: string;
  readonly duration: number;
  readonly status: string;
  readonly error: string;
  readonly rows: number;
  readonly bytes: number;
}

export interface RunJson {
  readonly path: string;
  readonly target: string;
  readonly results: readonly RunRecord[];
  readonly total: number;
  readonly ok: number;
  readonly failed: number;
  readonly skipped: number;
  readonly rows: number;
  readonly bytes: number;
  readonly ok_names: string;
}

/** The `run --json` payload; fails with both streams when stdout is not one JSON line. */
export const payload = (r: CliResult) => json(r) as RunJson;

/** Records as `[name, status, rows]` triples, in payload order. */
export const statusRows = (r: CliResult) => payload(r).results.map((x) => [x.name, x.status, x.rows] as const);

/** The record named `name` (full name). */
export function record(r: CliResult, name: string): RunRecord {
  const found = payload(r).results.find((x) => x.name === name);
  if (!found) throw new Error(`no record ${name} in ${r.out}\nstderr: ${r.err}`);
  return found;
}

/** The payload without `path`, `results` and durations: the totals a user reads. */
export function totals(r: CliResult) {
  const { total, ok, failed, skipped, rows, bytes, ok_names } = payload(r);
  return { total, ok, failed, skipped, rows, bytes, ok_names };
}
