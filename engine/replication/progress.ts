/**
 * Progress lines for a task's live log (a task's output grows while the
 * task runs): during a long load, one line every few seconds with the rows
 * and bytes moved so far.
 */
export type Progress = (rows: number | null, bytes: number) => void;

export function progressLog(log: (line: string) => void, everyMs = 5000, now: () => number = Date.now): Progress {
  let last = now();
  return (rows, bytes) => {
    const t = now();
    if (t - last < everyMs) return;
    last = t;
    const mb = (bytes / 1e6).toFixed(1);
    log(rows === null ? `… ${mb} MB sent so far` : `… ${rows} rows (${mb} MB) so far`);
  };
}
