/**
 * Source freshness as a query the runner executes like a test: it yields
 * 0 (fresh), 1 (older than warn_after) or 2 (older than error_after, or no
 * rows), against limits computed from the run's start in UTC — the same
 * SQL on both targets, no date arithmetic in the database.
 */
import { EngineError } from '../../errors.js';
import type { SourceTableProps } from './properties.js';

const PERIOD_MS: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

function limit(src: SourceTableProps, key: 'warn_after' | 'error_after', now: Date): string | undefined {
  const v = src.freshness?.[key] as { count?: unknown; period?: unknown } | undefined | null;
  if (!v) return undefined;
  const ms = PERIOD_MS[String(v.period)];
  if (ms === undefined || typeof v.count !== 'number') {
    throw new EngineError('load', `${src.file}: source '${src.source}.${src.name}': freshness.${key} needs count (a number) and period (minute, hour or day)`);
  }
  const at = new Date(now.getTime() - v.count * ms).toISOString().replace('T', ' ').replace('Z', '');
  return `cast('${at}' as timestamp)`;
}

/** The freshness query of a source table, or undefined when it declares no limits. */
export function freshnessSql(src: SourceTableProps, relation: string, now: Date): string | undefined {
  const warn = limit(src, 'warn_after', now);
  const error = limit(src, 'error_after', now);
  if (!warn && !error) return undefined;
  const f = src.loadedAtField!;
  const filter = src.freshness?.filter ? ` where ${String(src.freshness.filter)}` : '';
  const cases = [`when max(${f}) is null then 2`, ...(error ? [`when max(${f}) < ${error} then 2`] : []), ...(warn ? [`when max(${f}) < ${warn} then 1`] : [])];
  return `select case ${cases.join(' ')} else 0 end from ${relation}${filter}`;
}
