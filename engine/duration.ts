/**
 * Durations for ranges: `<int><unit>` with unit in
 * ms,s,m,h,d,w,mo,y. ms..w are fixed UTC lengths; mo and y are calendar
 * steps anchored on the start (window k starts at start + k·N months, the day
 * clamped to the month's end), so Jan 31 + 1mo = Feb 29 (2024), + 2mo = Mar 31.
 */
import { EngineError } from './errors.js';

export type Duration = { readonly kind: 'fixed'; readonly ms: number; readonly text: string } | { readonly kind: 'months'; readonly months: number; readonly text: string };

const FIXED: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseDuration(text: string): Duration {
  const m = /^(\d+)(ms|s|m|h|d|w|mo|y)$/.exec(text);
  if (!m) throw new EngineError('usage', `invalid duration '${text}': expected <int><unit> with unit in ms,s,m,h,d,w,mo,y`);
  const n = Number(m[1]);
  const unit = m[2]!;
  if (unit === 'mo') return { kind: 'months', months: n, text };
  if (unit === 'y') return { kind: 'months', months: n * 12, text };
  return { kind: 'fixed', ms: n * FIXED[unit]!, text };
}

/** `start` advanced by `k` steps of `d` (calendar-aware for months/years), in UTC. */
export function addDuration(start: Date, d: Duration, k = 1): Date {
  if (d.kind === 'fixed') return new Date(start.getTime() + d.ms * k);
  const total = start.getUTCMonth() + d.months * k;
  const year = start.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(start.getUTCDate(), lastDay);
  return new Date(Date.UTC(year, month, day, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds(), start.getUTCMilliseconds()));
}

/** `start` moved back by one `d`. */
export function subtractDuration(start: Date, d: Duration): Date {
  return addDuration(start, d, -1);
}
