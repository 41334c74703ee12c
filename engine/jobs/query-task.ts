/**
 * The work of a query job's single task: the file's statements
 * run in order on one connection, not wrapped in a transaction; the first
 * failure fails the task. The log gets each statement with its row count and
 * the last result's first 100 rows as a plain-text table.
 */
import { EngineError } from '../errors.js';
import type { QueryResult, TargetSession } from '../targets/target.js';

export const RESULT_PREVIEW_ROWS = 100;

export interface QueryTaskResult {
  /** Affected rows of every statement plus the rows the last one returned. */
  readonly rows: number;
  /** The last statement's result (pipeline query steps publish it). */
  readonly last?: QueryResult;
}

const oneLine = (sql: string) => {
  const first = sql.trim().split('\n')[0]!;
  return first.length > 120 ? `${first.slice(0, 117)}...` : first;
};

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** A plain-text table (no ANSI), columns padded to their widest cell. */
export function renderTable(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = rows.map((r) => r.map(cell));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (vals: readonly string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ').trimEnd();
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n');
}

/** `keepLast`: return the last statement's result too (it may be large; query jobs do not need it). */
export async function runQueryStatements(
  session: TargetSession,
  statements: readonly string[],
  log: (line: string) => void,
  options: { readonly keepLast?: boolean } = {},
): Promise<QueryTaskResult> {
  let rows = 0;
  let last: QueryResult | undefined;
  for (const [i, stmt] of statements.entries()) {
    const label = `statement ${i + 1}/${statements.length}`;
    log(`${label}: ${oneLine(stmt)}`);
    let result;
    try {
      result = await session.query(stmt);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'cancelled') throw err;
      throw EngineError.wrap(`statement ${i + 1} failed`, err, 'node');
    }
    rows += result.count;
    last = result;
    log(`${label}: ${result.count} row(s)`);
    if (i === statements.length - 1 && result.columns.length > 0) {
      const preview = result.rows.slice(0, RESULT_PREVIEW_ROWS);
      log(renderTable(result.columns, preview));
      if (result.rows.length > preview.length) log(`(${result.rows.length - preview.length} more row(s) not shown)`);
    }
  }
  return options.keepLast && last !== undefined ? { rows, last } : { rows };
}
