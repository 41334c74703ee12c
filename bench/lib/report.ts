/**
 * Result rows and their rendering. Every row pairs our figure with a
 * baseline measured in the same run; `ratio` is always our cost divided by
 * the baseline's (time over time, or the inverse of throughput over
 * throughput), so 1.00× is "as fast as the baseline" and bigger is slower.
 */

export interface Target {
  /** e.g. `≤ 1.3×`, `≤ 5 s`. */
  readonly text: string;
  /** null: not evaluated in this mode (e.g. --quick uses smaller inputs). */
  readonly met: boolean | null;
  /** How far off when missed, e.g. `+0.4 s (8%)`. */
  readonly miss?: string;
}

export interface Row {
  /** Stable key for results.json consumers. */
  readonly id: string;
  readonly label: string;
  readonly ours: string;
  readonly baseline: string;
  readonly ratio: number | null;
  readonly target?: Target;
  /** Raw numbers (ms, bytes, counts). */
  readonly data: Readonly<Record<string, unknown>>;
}

export const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : v >= 10 ? `${v.toFixed(0)} ms` : v >= 1 ? `${v.toFixed(1)} ms` : `${(v * 1000).toFixed(1)} µs`);
export const mb = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MB`;
export const int = (v: number): string => Math.round(v).toLocaleString('en-US');
export const rate = (perSecond: number, unit: string): string =>
  `${perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)} M` : perSecond >= 1e4 ? `${(perSecond / 1e3).toFixed(0)} k` : int(perSecond)} ${unit}/s`;
/** `+1.23` / `-0.40`: a difference, always with its sign. */
export const signed = (v: number, digits = 2): string => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(digits)}`;
export const ratio = (v: number | null): string => (v === null ? '—' : `${v.toFixed(2)}×`);

function targetCell(t: Target | undefined): string {
  if (!t) return '';
  if (t.met === null) return `${t.text} (n/a in --quick)`;
  return t.met ? `${t.text} ✅ met` : `${t.text} ❌ missed${t.miss ? ` by ${t.miss}` : ''}`;
}

const escape = (s: string) => s.replace(/\|/g, '\\|');

/** A GitHub-flavoured Markdown table (also readable in a terminal). */
export function markdownTable(rows: readonly Row[]): string {
  const head = ['benchmark', 'ours', 'baseline', 'ratio', 'target'];
  const body = rows.map((r) => [r.label, r.ours, r.baseline, ratio(r.ratio), targetCell(r.target)].map(escape));
  const widths = head.map((h, c) => Math.max(h.length, ...body.map((b) => b[c]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** The middle value (the upper one of the two middles for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** Smallest value of `runs` by `key`: benchmarks report the best of N repetitions. */
export function best<T>(runs: readonly T[], key: (r: T) => number): T {
  return runs.reduce((a, b) => (key(b) < key(a) ? b : a));
}
