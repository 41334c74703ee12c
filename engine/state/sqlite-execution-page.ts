/**
 * The SQLite statements of an execution page: the filter of an
 * ExecutionQuery (shared by listExecutions and the JSON page), and the page
 * as JSON texts built by SQLite itself — the API's Execution objects
 * (public-execution.ts), status maps included, in page order — so that no
 * row crosses into JavaScript as values and no `JSON.stringify` of a page
 * runs anywhere. A terminal execution's text is built once, when it ends,
 * and stored in its row (migration 3); reading it is most of a page's cost.
 * CPU per page of the bench's mix (40 rows on average, the 2-core dev
 * machine): raw rows + status counts + JSON.stringify ≈ 280–310 µs; built
 * here row by row ≈ 240–265 µs; stored ≈ 105 µs, of which the index walk
 * alone ≈ 70 µs.
 *
 * Byte for byte what JSON.stringify(publicExecution(record)) gives
 * (test/store-contract.ts compares them for every filter): `json_quote`
 * escapes text as JSON.stringify does; `duration` is printed from whole
 * milliseconds with three decimals, trailing zeros dropped (the digits
 * JSON.stringify prints for ms / 1000); `build` is stored as
 * JSON.stringify's own output and is copied as it is.
 */
import { EXECUTION_STATUSES, type ExecutionQuery } from './store.js';
import { executionFilter } from './execution-filter.js';
import { positional } from './sql-dialect.js';

/** Whole milliseconds of a stored canonical time (julianday keeps exact milliseconds). */
const millis = (column: string) => `CAST(round(julianday(${column}) * 86400000) AS INTEGER)`;

const EMPTY_MAP = `{${EXECUTION_STATUSES.map((s) => `"${s}":0`).join(',')}}`;

/** The status map of execution `e`: counts of its tasks and steps per status (an execution has one kind). */
const STATUS_MAP = `CASE WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.exec_id = e.exec_id) OR EXISTS (SELECT 1 FROM steps s WHERE s.exec_id = e.exec_id)
  THEN (SELECT printf('{${EXECUTION_STATUSES.map((s) => `"${s}":%d`).join(',')}}', ${EXECUTION_STATUSES.map((s) => `count(*) FILTER (WHERE status = '${s}')`).join(', ')})
        FROM (SELECT status FROM tasks WHERE exec_id = e.exec_id UNION ALL SELECT status FROM steps WHERE exec_id = e.exec_id))
  ELSE '${EMPTY_MAP}' END`;

/**
 * Seconds from start_time to end_time (never negative) as JSON.stringify
 * prints whole milliseconds / 1000: `4`, `0.25`, `12.345` — three decimals,
 * trailing zeros and point dropped.
 */
const DURATION = `CASE WHEN end_time IS NULL THEN 'null'
  ELSE rtrim(rtrim(printf('%.3f', max(0, ${millis('end_time')} - ${millis('start_time')}) / 1000.0), '0'), '.') END`;

/** The executions columns PUBLIC_JSON reads (a change to any of them changes the text). */
export const EXECUTION_JSON_SOURCES = [
  'exec_id', 'job_id', 'job_name', 'job_type', 'file_name', 'status', 'error', 'triggered_by', 'start_time', 'end_time', 'row_count', 'byte_count', 'build',
] as const;

/**
 * The public JSON of the executions row in scope (its columns unqualified,
 * the row itself as `e`). Migration 3 stores it for terminal executions
 * (column `public_json`, kept by triggers); a change to it needs a migration
 * that replaces those triggers and clears the stored texts.
 */
export const PUBLIC_JSON = `printf('{"exec_id":%s,"job_id":%s,"job_name":%s,"job_type":%s,"file_name":%s,"status":%s,"error":%s,"trigger":%s,"start_time":%s,"end_time":%s,"duration":%s,"rows":%d,"bytes":%d,"status_map":%s,"build":%s}',
  json_quote(exec_id), json_quote(job_id), json_quote(job_name), json_quote(job_type), json_quote(file_name), json_quote(status), json_quote(error),
  json_quote(triggered_by), json_quote(start_time), json_quote(end_time), ${DURATION}, row_count, byte_count, ${STATUS_MAP}, COALESCE(build, 'null'))`;

/**
 * The page in page order (the index's order: no sort), one value per
 * execution: its stored JSON text (a terminal execution), else its rowid;
 * `fill` builds the texts of those rowids (active executions, and rows
 * stored before migration 3), taking them as a JSON array. Two statements
 * because one with the building expression beside the stored text costs
 * ≈50 % more per page even when every row has its text (measured: ≈150 µs
 * against ≈105 µs for a page of 40, the bench's mix of filters). The caller
 * joins them into the array (sqlite-readers.ts, the SQLite backend's executionPage).
 */
export function executionPageSql(q: ExecutionQuery): { readonly sql: string; readonly params: readonly unknown[]; readonly fill: string } | null {
  const f = executionFilter(q);
  if (f === null) return null;
  // The filter takes each parameter once, in order: `?` in place of `$n` binds the same values.
  return { sql: positional(`SELECT COALESCE(public_json, rowid) FROM executions e ${f.clause}`).sql, params: f.params, fill: FILL };
}

const FILL = `SELECT rowid, ${PUBLIC_JSON} FROM executions e WHERE rowid IN (SELECT value FROM json_each(?))`;
