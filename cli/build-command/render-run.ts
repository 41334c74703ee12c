/**
 * Run and test output: progress lines, the summary,
 * the `Errors:` block, and the JSON payloads. Records arrive in DAG order.
 */

import type { TestResult } from '../../engine/build-plan/node-task.js';
import { failureSummary, runPayload, seconds, type ResultRecord, type RunPayload, type RunStatus } from '../../engine/build-plan/run-output.js';

export { failureSummary, runPayload, seconds, type ResultRecord, type RunPayload, type RunStatus };

const TEST_STATUS: Record<RunStatus, string> = { success: 'ok', error: 'fail', skipped: 'skip' };

/**
 * `test --json` entries. With `tests` (the data tests that ran), an entry
 * whose tests ran also carries `failures`: its failing rows (null when a
 * test query itself failed).
 */
export function testEntries(results: readonly ResultRecord[], tests: readonly TestResult[] = []) {
  return results.map((r) => {
    // A dbt test node's results name what it tests; their label is the node's name.
    const mine = tests.filter((t) => t.node === r.name || t.test === r.name);
    const failures = mine.length === 0 ? undefined : mine.some((t) => t.violations === null) ? null : mine.reduce((a, t) => a + t.violations!, 0);
    return { name: r.name, type: r.type === 'seed' ? 'seed' : 'test', status: TEST_STATUS[r.status], error: r.error, duration: r.duration, ...(failures !== undefined ? { failures } : {}) };
  });
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** `[i/total] <t> (<kind>) ...... WORD` with dots padding the prefix to column 70 (at least 3). */
export function progressLine(index: number, total: number, table: string, kind: string, word: string): string {
  const prefix = `[${index}/${total}] ${table} (${kind}) `;
  return `${prefix}${'.'.repeat(Math.max(3, 70 - prefix.length))} ${word}`;
}

/**
 * What a finished node's progress line appends after its duration: the rows
 * the target reported for a table, an incremental merge or a seed
 * (` [3 rows]`). A view holds no rows of its own and a `test` run writes
 * none, so their lines end at the duration, as do skipped nodes.
 */
export function rowsNote(kind: string, rows: number | undefined): string {
  if (rows === undefined || kind === 'view' || kind === 'test') return '';
  return ` [${rows} row${rows === 1 ? '' : 's'}]`;
}

export function summaryLine(ms: number, p: Pick<RunPayload, 'ok' | 'failed' | 'skipped'>): string {
  return `Build Completed in ${formatDuration(ms)} | ${p.ok} Successes | ${p.failed} Failures${p.skipped > 0 ? ` | ${p.skipped} Skipped` : ''}`;
}

/** `Errors:` and each failed node's error; `locate` adds where a SQL error points (`at marts/bad.sql:5`). */
export function errorsBlock(results: readonly ResultRecord[], locate?: (r: ResultRecord) => string | undefined): string {
  const failed = results.filter((r) => r.status === 'error');
  if (failed.length === 0) return '';
  const lines = ['Errors:'];
  for (const r of failed) {
    lines.push(`  - ${r.name}:`);
    for (const l of r.error.split('\n')) lines.push(`      ${l}`);
    const at = locate?.(r);
    if (at !== undefined) lines.push(`      ${at}`);
  }
  return lines.join('\n') + '\n';
}

const TEST_WORD: Record<TestResult['status'], string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', error: 'ERROR' };

/** One line per data test: `test <label> on <node> .... PASS` (violating rows when not passing). */
export function testLine(t: TestResult): string {
  const prefix = `test ${t.test} on ${t.node} `;
  const rows = t.violations !== null && t.violations > 0 ? ` (${t.violations} violating row${t.violations === 1 ? '' : 's'})` : '';
  return `${prefix}${'.'.repeat(Math.max(3, 70 - prefix.length))} ${TEST_WORD[t.status]}${rows}`;
}

/**
 * The line beside a model's FAIL line when the model was written and a data
 * test failed: bad data, not bad SQL. `planned` is the number of data tests the
 * model has; the ones after the failing test are not run, and the model's
 * dependents are skipped (the contract's outcome for a failing model).
 */
export function builtButTestFailedLine(table: string, kind: string, rows: number, ran: readonly TestResult[], planned: number): string | undefined {
  const failed = ran.at(-1);
  if (failed === undefined || (failed.status !== 'fail' && failed.status !== 'error')) return undefined;
  const what =
    failed.status === 'fail'
      ? `failed: ${failed.violations} violating row${failed.violations === 1 ? '' : 's'}`
      : 'could not run (its query failed)';
  const notRun = planned - ran.length;
  return `  model ${table} built${rowsNote(kind, rows)}; data test ${failed.test} ${what}${notRun > 0 ? `; ${notRun} remaining test${notRun === 1 ? '' : 's'} not run` : ''}; dependents skipped`;
}

/** `Tests: N passed, M warned, K failed`; a test whose query failed counts as failed. */
export function testsSummary(tests: readonly TestResult[]): string {
  const n = (s: TestResult['status'][]) => tests.filter((t) => s.includes(t.status)).length;
  return `Tests: ${n(['pass'])} passed, ${n(['warn'])} warned, ${n(['fail', 'error'])} failed`;
}
