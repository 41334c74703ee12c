/**
 * The Work (sql-dialect.ts) of the store's execution, task and step writes
 * and reads that take several statements or long SQL texts, for both
 * backends; SqlStore (sql-store.ts) runs them through its Dialect.
 */
import * as R from './records.js';
import { changes, row, rows, values, type Dialect, type RecordKind, type Work } from './sql-dialect.js';
import type { ClaimOptions, ExecutionPatch, ExecutionRecord, ExecutionStatus, StatusMap, StepUpsert, TaskUpsert } from './store.js';

export const ACTIVE = "('queued', 'running')";
export const TASK_COLUMNS = 'exec_id, task_id, seq, stream_name, object, mode, status, error, start_time, end_time, row_count, byte_count, metrics';
export const STEP_COLUMNS = 'exec_id, step_id, seq, type, status, error, start_time, end_time, state';

/** Per record kind: its table, its output chunks' table and its id column. */
export const OUTPUT_TABLES: Record<RecordKind, { readonly table: string; readonly out: string; readonly col: string }> = {
  task: { table: 'tasks', out: 'task_output', col: 'task_id' },
  step: { table: 'steps', out: 'step_output', col: 'step_id' },
};

/**
 * `<col> = CASE WHEN <given> THEN <value> ELSE <current> END` for an optional
 * field of an upsert or patch, its two parameters appended to `params`.
 * Returns the assignment and the value's parameter (`CAST($n AS <type>)`:
 * PostgreSQL must know a parameter's type wherever it appears).
 */
function keep(d: Dialect, col: string, table: string, g: R.Given, params: unknown[], type = 'TEXT'): { set: string; value: string } {
  params.push(d.bool(g.has), g.value);
  const value = `CAST($${params.length} AS ${type})`;
  return { set: `${col} = CASE WHEN CAST($${params.length - 1} AS BOOLEAN) THEN ${value} ELSE ${table}.${col} END`, value };
}

/**
 * An execution from its select list (Dialect.executionColumns): the record,
 * plus, once claimed in cluster mode, the daemon that claimed it and the
 * project-files version it ran on.
 */
export function executionFrom(v: readonly unknown[], maps: Map<string, StatusMap>): ExecutionRecord {
  const e = R.executionFromValues(v, maps);
  const [claimedBy, treeVersion] = v.slice(R.EXECUTION_COLUMNS.length);
  if (claimedBy === null || claimedBy === undefined) return e;
  return { ...e, daemon: String(claimedBy), ...(treeVersion !== null && treeVersion !== undefined ? { tree_version: Number(treeVersion) } : {}) };
}

/** Records of execution rows (value arrays) with their status maps: one grouped query; an execution has either tasks or steps. */
export function* withMaps(d: Dialect, found: readonly unknown[][]): Work<ExecutionRecord[]> {
  if (found.length === 0) return [];
  const counts = yield* rows(
    `SELECT exec_id, status, COUNT(*) AS n FROM tasks WHERE ${d.inList('exec_id', '$1')} GROUP BY exec_id, status
     UNION ALL
     SELECT exec_id, status, COUNT(*) AS n FROM steps WHERE ${d.inList('exec_id', '$1')} GROUP BY exec_id, status`,
    [d.list(found.map((v) => v[0]))],
  );
  const maps = R.statusMaps(counts);
  return found.map((v) => executionFrom(v, maps));
}

/** The executions `rest` (after `SELECT <execution columns> FROM executions e`) selects, as records. */
export function* executions(d: Dialect, rest: string, params: readonly unknown[]): Work<ExecutionRecord[]> {
  return yield* withMaps(d, yield* values(`SELECT ${d.executionColumns} FROM executions e ${rest}`, params));
}

/**
 * Open tasks and steps of the executions `ids` → `status`, end_time `now`
 * where unset. Returns how many changed.
 */
export function* closeOpen(d: Dialect, ids: readonly string[], status: ExecutionStatus, now: string): Work<number> {
  const list = d.list(ids);
  let n = 0;
  for (const table of ['tasks', 'steps']) {
    n += yield* changes(`UPDATE ${table} SET status = $1, end_time = COALESCE(end_time, $2) WHERE ${d.inList('exec_id', '$3')} AND status IN ${ACTIVE}`, [status, now, list]);
  }
  if (n > 0 && d.afterClose) yield* d.afterClose(list);
  return n;
}

/** The UPDATE of updateExecution (`$1` the exec id; RETURNING status, end_time) and its parameters. */
export function executionUpdate(d: Dialect, execId: string, patch: ExecutionPatch): { sql: string; params: unknown[] } {
  const v = R.executionPatchValues(patch, R.nowIso());
  const params: unknown[] = [execId];
  const sets = [
    keep(d, 'status', 'executions', v.status, params),
    keep(d, 'error', 'executions', v.error, params),
    keep(d, 'end_time', 'executions', v.end_time, params),
    keep(d, 'row_count', 'executions', v.rows, params, 'BIGINT'),
    keep(d, 'byte_count', 'executions', v.bytes, params, 'BIGINT'),
    keep(d, 'build', 'executions', v.build, params),
  ].map((k) => k.set);
  return { sql: `UPDATE executions SET ${sets.join(', ')} WHERE exec_id = $1 AND status IN ${ACTIVE} RETURNING status, end_time`, params };
}

/** Marks the oldest claimable queued execution running; its row (execution columns), or undefined. */
export function* claim(d: Dialect, options: ClaimOptions): Work<unknown[] | undefined> {
  if (options.maxRunning !== undefined) {
    // Cluster mode: serialise one owner's claims so two concurrent calls cannot both take the last slot.
    if (d.claimLock !== undefined) yield* rows(d.claimLock, [options.owner ?? '']);
    const running = options.owner === undefined
      ? yield* row("SELECT COUNT(*) AS n FROM executions WHERE status = 'running'")
      : yield* row("SELECT COUNT(*) AS n FROM executions WHERE status = 'running' AND claimed_by = $1", [options.owner]);
    if (Number(running!.n) >= options.maxRunning) return undefined;
  }
  const next = yield* row(
    `SELECT e.exec_id FROM executions e WHERE e.status = 'queued'
       AND NOT EXISTS (SELECT 1 FROM executions r WHERE r.job_id = e.job_id AND r.status = 'running')
     ORDER BY e.exec_id LIMIT 1${d.skipLocked}`,
  );
  if (!next) return undefined;
  const sql = `UPDATE executions SET status = 'running', claimed_by = $2${d.claimCounts} WHERE exec_id = $1 RETURNING ${d.executionColumns}`;
  return (yield* values(sql, [next.exec_id, options.owner ?? null]))[0];
}

/** Running executions (of `owner`, when given) and their open records → interrupted; their ids. */
export function* interruptRunning(d: Dialect, at: string, error: string, owner: string | undefined): Work<string[]> {
  const found = owner === undefined
    ? yield* rows(`SELECT exec_id FROM executions WHERE status = 'running' ORDER BY exec_id${d.lockRows}`)
    : yield* rows(`SELECT exec_id FROM executions WHERE status = 'running' AND claimed_by = $1 ORDER BY exec_id${d.lockRows}`, [owner]);
  const ids = found.map((r) => String(r.exec_id));
  if (ids.length === 0) return ids;
  const sql = `UPDATE executions SET status = 'interrupted', error = $1, end_time = $2 WHERE ${d.inList('exec_id', '$3')} AND status = 'running'`;
  yield* changes(sql, [R.cleanText(error), at, d.list(ids)]);
  yield* closeOpen(d, ids, 'interrupted', at);
  return ids;
}

/** Creates or changes a task unless it is terminal; whether it did. */
export function* upsertTask(d: Dialect, t: TaskUpsert): Work<boolean> {
  const v = R.taskUpsertValues(t);
  const p: unknown[] = [v.exec_id, v.task_id, v.seq, v.stream_name, v.mode, v.status];
  const [object, error, start, end, rowCount, byteCount, metrics] = [
    keep(d, 'object', 'tasks', v.object, p),
    keep(d, 'error', 'tasks', v.error, p),
    keep(d, 'start_time', 'tasks', v.start_time, p),
    keep(d, 'end_time', 'tasks', v.end_time, p),
    keep(d, 'row_count', 'tasks', v.rows, p, 'BIGINT'),
    keep(d, 'byte_count', 'tasks', v.bytes, p, 'BIGINT'),
    keep(d, 'metrics', 'tasks', v.metrics, p),
  ];
  const sql = `INSERT INTO tasks (${TASK_COLUMNS}) VALUES ($1, $2,
      COALESCE(CAST($3 AS INTEGER), (SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks WHERE exec_id = $1)),
      $4, ${object.value}, $5, $6, ${error.value}, ${start.value}, ${end.value}, COALESCE(${rowCount.value}, 0), COALESCE(${byteCount.value}, 0), ${metrics.value})
    ON CONFLICT (exec_id, task_id) DO UPDATE SET stream_name = excluded.stream_name, mode = excluded.mode, status = excluded.status,
      ${[object, error, start, end, rowCount, byteCount, metrics].map((k) => k.set).join(', ')}
    WHERE tasks.status IN ${ACTIVE}`;
  try {
    return (yield* changes(sql, p)) > 0;
  } catch (err) {
    if (d.violates(err, 'foreign_key')) throw R.executionNotFound(t.exec_id);
    throw err;
  }
}

/** As upsertTask; a new step's seq is one past the execution's last step. */
export function* upsertStep(d: Dialect, s: StepUpsert): Work<boolean> {
  const v = R.stepUpsertValues(s);
  const p: unknown[] = [v.exec_id, v.step_id, v.type, v.status];
  const kept = [
    keep(d, 'error', 'steps', v.error, p),
    keep(d, 'start_time', 'steps', v.start_time, p),
    keep(d, 'end_time', 'steps', v.end_time, p),
    keep(d, 'state', 'steps', v.state, p),
  ];
  const sql = `INSERT INTO steps (${STEP_COLUMNS}) VALUES ($1, $2,
      (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps WHERE exec_id = $1), $3, $4, ${kept.map((k) => k.value).join(', ')})
    ON CONFLICT (exec_id, step_id) DO UPDATE SET type = excluded.type, status = excluded.status, ${kept.map((k) => k.set).join(', ')}
    WHERE steps.status IN ${ACTIVE}`;
  try {
    return (yield* changes(sql, p)) > 0;
  } catch (err) {
    if (d.violates(err, 'foreign_key')) throw R.executionNotFound(s.exec_id);
    throw err;
  }
}

/** The append that crosses the output cap (once per record), or one to a record already truncated. */
export function* crossing(d: Dialect, kind: RecordKind, execId: string, id: string, text: string, cap: number): Work<void> {
  const { table, out, col } = OUTPUT_TABLES[kind];
  const cur = yield* row(`SELECT output_bytes, output_chunks, output_truncated FROM ${table} WHERE exec_id = $1 AND ${col} = $2${d.lockRows}`, [execId, id]);
  if (!cur) throw R.missingRecord(kind, id, execId);
  if (cur.output_truncated) return;
  const n = Number(cur.output_chunks);
  const last = n === 0 ? undefined : yield* row(`SELECT chunk FROM ${out} WHERE exec_id = $1 AND ${col} = $2 AND n = $3`, [execId, id, n]);
  const cut = R.truncatedAppend(Number(cur.output_bytes), cap, text, String(last?.chunk ?? '').endsWith('\n'));
  yield* changes(`UPDATE ${table} SET output_bytes = output_bytes + $3, output_chunks = $4, output_truncated = TRUE WHERE exec_id = $1 AND ${col} = $2`, [execId, id, cut.bytes, n + 1]);
  yield* changes(`INSERT INTO ${out} (exec_id, ${col}, n, chunk) VALUES ($1, $2, $3, $4)`, [execId, id, n + 1, cut.chunk]);
}
