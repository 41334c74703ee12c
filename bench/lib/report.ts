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
  /** What was reached when missed and how far off, e.g. `+0.4 s (8%) over`, `0.92× the floor's req/s`. */
  readonly miss?: string;
}

export interface Row {
  /** 1-minute load average when the row's suite started and ended (set by bench/run.ts): other work on the machine skews every figure. */
  load?: readonly [number, number];
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

/** PASS / MISS (by how much) / n/a in --quick; empty for a row without a target (shown for context). */
export function verdict(t: Target | undefined): string {
  if (!t) return '';
  if (t.met === null) return 'n/a (--quick)';
  return t.met ? 'PASS' : `MISS${t.miss ? ` (${t.miss})` : ''}`;
}

/** `min 1.23 s · median 1.30 s (n 3)`: every repeated figure is shown as both. */
export function minMedian(values: readonly number[], format: (v: number) => string = ms): string {
  if (values.length <= 1) return format(values[0] ?? Number.NaN);
  return `min ${format(Math.min(...values))} · median ${format(median(values))} (n ${values.length})`;
}

/** A target on a figure that must stay at or under `limit` (`above: false`) or at or over it. */
export function targetOf(text: string, value: number, limit: number, quick: boolean, missText: (over: number) => string, above = false): Target {
  const met = above ? value >= limit : value <= limit;
  return { text, met: quick ? null : met, ...(!quick && !met ? { miss: missText(above ? limit - value : value - limit) } : {}) };
}

const escape = (s: string) => s.replace(/\|/g, '\\|');

/** A GitHub-flavoured Markdown table; `pad`: columns padded to one width (for a terminal), else compact (for docs). */
export function markdownTable(rows: readonly Row[], pad = true): string {
  const head = ['benchmark', 'ours', 'same-run baseline', 'ratio', 'target', 'verdict', 'load'];
  const loadCell = (l: Row['load']) => (l ? `${l[0].toFixed(1)}→${l[1].toFixed(1)}` : '');
  const body = rows.map((r) => [r.label, r.ours, r.baseline, ratio(r.ratio), r.target?.text ?? '', verdict(r.target), loadCell(r.load)].map(escape));
  const widths = head.map((h, c) => (pad ? Math.max(h.length, ...body.map((b) => b[c]!.length)) : 1));
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
