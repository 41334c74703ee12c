/**
 * `--range start,end[,step]`: validated from the argument
 * alone (usage errors, exit 2) and turned into chunks `[lower, upper)`.
 */
import { EngineError } from './errors.js';
import { addDuration, parseDuration, type Duration } from './duration.js';

export interface RangeSpec {
  readonly text: string;
  readonly start: string;
  readonly end: string;
  readonly step?: Duration;
}

export interface Chunk {
  /** SQL-ready literal text (without quotes). */
  readonly lower: string;
  readonly upper: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses `YYYY-MM-DD` or an ISO timestamp (no zone = UTC); undefined when it is neither. */
export function parseIsoUtc(text: string): Date | undefined {
  if (DATE.test(text)) {
    const d = new Date(`${text}T00:00:00Z`);
    return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text ? undefined : d;
  }
  if (!TIMESTAMP.test(text)) return undefined;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(text);
  const d = new Date(hasZone ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** RFC3339 UTC without milliseconds unless needed: `2024-02-01T00:00:00Z`. */
export function rfc3339(d: Date): string {
  const iso = d.toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export function parseRangeFlag(text: string): RangeSpec {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length < 2 || parts.length > 3) throw new EngineError('usage', `invalid --range "${text}": expected 'start,end' or 'start,end,step'`);
  const [start, end, stepText] = parts as [string, string, string | undefined];
  if (start === '' || end === '') throw new EngineError('usage', `invalid --range "${text}": start and end must be non-empty`);
  let step: Duration | undefined;
  if (stepText !== undefined) {
    try {
      step = parseDuration(stepText);
    } catch (err) {
      throw new EngineError('usage', `invalid --range step: ${(err as Error).message}`);
    }
    if (!parseIsoUtc(start)) throw new EngineError('usage', '--range with step requires ISO date/timestamp start');
    if (!parseIsoUtc(end)) throw new EngineError('usage', '--range with step requires ISO date/timestamp end');
  }
  const s = parseIsoUtc(start);
  const e = parseIsoUtc(end);
  if (s && e && s.getTime() >= e.getTime()) throw new EngineError('usage', `invalid --range "${text}": start must be before end`);
  return { text, start, end, ...(step ? { step } : {}) };
}

/** The chunks of a range: one verbatim chunk without a step, calendar-aware windows with one. */
export function rangeChunks(r: RangeSpec): Chunk[] {
  if (!r.step) return [{ lower: r.start, upper: r.end }];
  const start = parseIsoUtc(r.start)!;
  const end = parseIsoUtc(r.end)!;
  const chunks: Chunk[] = [];
  for (let k = 0; ; k++) {
    const lo = addDuration(start, r.step, k);
    if (lo.getTime() >= end.getTime()) break;
    const hi = addDuration(start, r.step, k + 1);
    chunks.push({ lower: rfc3339(lo), upper: rfc3339(hi.getTime() < end.getTime() ? hi : end) });
  }
  return chunks;
}
