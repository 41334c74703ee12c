/**
 * Job schedules: five-field cron expressions evaluated in the
 * job's IANA timezone. croner finds the next fire; the expression is parsed
 * here too, because the contract is stricter than croner (no macros, no
 * seconds field) and because a local time inside a DST gap must be skipped,
 * where croner moves it to the first valid instant.
 */
import { Cron } from 'croner';

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  readonly nameBase?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS, nameBase: 1 },
  { min: 0, max: 7, names: DAYS, nameBase: 0 },
];

function value(text: string, f: FieldSpec): number {
  const upper = text.toUpperCase();
  const named = f.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + f.nameBase!;
  if (!/^\d+$/.test(text)) throw new Error(text);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new Error(text);
  return n;
}

function parseField(text: string, f: FieldSpec): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText))) throw new Error(part);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [f.min, f.max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      [lo, hi] = [value(a, f), value(b, f)];
      if (lo > hi) throw new Error(part);
    } else {
      lo = value(range, f);
      hi = stepText === undefined ? lo : f.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export interface CronExpr {
  readonly text: string;
  readonly fields: readonly Set<number>[];
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

/** Parses a 5-field expression; undefined when it is not one the contract accepts. */
export function parseCron(text: string): CronExpr | undefined {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5 || text.trim().startsWith('@')) return undefined;
  try {
    const fields = parts.map((p, i) => parseField(p, FIELDS[i]!));
    if (fields[4]!.has(7)) fields[4]!.add(0);
    new Cron(text, { paused: true }); // croner must accept it too
    return { text, fields, domRestricted: parts[2] !== '*', dowRestricted: parts[4] !== '*' };
  } catch {
    return undefined;
  }
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function localParts(d: Date, tz: string): number[] {
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', minute: 'numeric', hour: 'numeric', day: 'numeric', month: 'numeric', weekday: 'short' });
  const p = Object.fromEntries(fmt.formatToParts(d).map((x) => [x.type, x.value]));
  return [Number(p.minute), Number(p.hour), Number(p.day), Number(p.month), DAYS.indexOf(String(p.weekday).toUpperCase())];
}

/** Whether `d`'s wall-clock time in `tz` matches (classic cron: either day field may match when both are restricted). */
export function matches(expr: CronExpr, d: Date, tz: string): boolean {
  const [mi, h, dom, mon, dow] = localParts(d, tz) as [number, number, number, number, number];
  const f = expr.fields;
  if (!f[0]!.has(mi) || !f[1]!.has(h) || !f[3]!.has(mon)) return false;
  const domOk = f[2]!.has(dom);
  const dowOk = f[4]!.has(dow);
  if (expr.domRestricted && expr.dowRestricted) return domOk || dowOk;
  return domOk && dowOk;
}

/** The next fire strictly after `after` over several expressions (same minute fires once); null when none. */
export function nextRun(schedules: readonly string[], tz: string, after: Date): Date | null {
  let best: Date | null = null;
  for (const text of schedules) {
    const expr = parseCron(text);
    if (!expr) continue;
    const cron = new Cron(text, { timezone: tz, paused: true });
    let from = after;
    for (let guard = 0; guard < 8; guard++) {
      const next = cron.nextRun(from);
      if (!next) break;
      if (matches(expr, next, tz)) {
        if (!best || next < best) best = next;
        break;
      }
      from = next; // a DST-gap instant croner moved forward: skip it
    }
  }
  return best;
}
