/**
 * Run and test output (build.md §15.2–§15.7): progress lines, the summary,
 * the `Errors:` block, and the JSON payloads. Records arrive in DAG order.
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

const TEST_STATUS: Record<RunStatus, string> = { success: 'ok', error: 'fail', skipped: 'skip' };

/** `test --json` entries (§15.6). */
export function testEntries(results: readonly ResultRecord[]) {
  return results.map((r) => ({ name: r.name, type: r.type === 'seed' ? 'seed' : 'test', status: TEST_STATUS[r.status], error: r.error, duration: r.duration }));
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** `[i/total] <t> (<kind>) ...... WORD` with dots padding the prefix to column 70 (at least 3). */
export function progressLine(index: number, total: number, table: string, kind: string, word: string): string {
  const prefix = `[${index}/${total}] ${table} (${kind}) `;
  return `${prefix}${'.'.repeat(Math.max(3, 70 - prefix.length))} ${word}`;
}

export function summaryLine(ms: number, p: Pick<RunPayload, 'ok' | 'failed' | 'skipped'>): string {
  return `Build Completed in ${formatDuration(ms)} | ${p.ok} Successes | ${p.failed} Failures${p.skipped > 0 ? ` | ${p.skipped} Skipped` : ''}`;
}

export function errorsBlock(results: readonly ResultRecord[]): string {
  const failed = results.filter((r) => r.status === 'error');
  if (failed.length === 0) return '';
  const lines = ['Errors:'];
  for (const r of failed) {
    lines.push(`  - ${r.name}:`);
    for (const l of r.error.split('\n')) lines.push(`      ${l}`);
  }
  return lines.join('\n') + '\n';
}

export function failureSummary(results: readonly ResultRecord[]): string {
  const failed = results.filter((r) => r.status === 'error');
  return `build completed with ${failed.length} error(s): ${failed.map((r) => `${r.name}: ${r.error}`).join('; ')}`;
}
