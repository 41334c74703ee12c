/**
 * Durations inside job files: `(<int>(s|m|h|d|w))+`, e.g. `90s`,
 * `1h30m`, `7d`. A different grammar from build ranges (engine/duration.ts,
 * one number and unit, months and years allowed), hence its own parser.
 */

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const WHOLE = /^(?:\d+[smhdw])+$/;
const PART = /(\d+)([smhdw])/g;

/** Seconds of a job-file duration, or undefined when the text does not follow the grammar. */
export function parseJobDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(PART)) total += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  return Number.isSafeInteger(total) ? total : undefined;
}
