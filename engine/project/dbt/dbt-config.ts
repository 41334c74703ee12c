/**
 * Which dbt config keys do what here. A key that changes what dbt builds
 * and that we do not implement is reported by name (a warning): it is never
 * dropped in silence. Keys that only describe (meta, docs, group, access)
 * are accepted.
 */
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Mode } from '../modes.js';

const DESCRIPTIVE = ['meta', 'docs', 'group', 'access', 'description', 'persist_docs', 'event_time', 'latest_version', 'versions'];
/** Keys models act on. */
export const MODEL_KEYS: ReadonlySet<string> = new Set([
  ...DESCRIPTIVE,
  'materialized',
  'schema',
  'alias',
  'database',
  'tags',
  'enabled',
  'pre_hook',
  'post_hook',
  'full_refresh',
  'unique_key',
  'incremental_strategy',
  'on_schema_change',
]);
export const SNAPSHOT_KEYS: ReadonlySet<string> = new Set([
  ...DESCRIPTIVE,
  'target_schema',
  'target_database',
  'schema',
  'alias',
  'database',
  'unique_key',
  'strategy',
  'updated_at',
  'check_cols',
  'invalidate_hard_deletes',
  'hard_deletes',
  'tags',
  'enabled',
  'pre_hook',
  'post_hook',
]);
export const SEED_KEYS: ReadonlySet<string> = new Set([...DESCRIPTIVE, 'schema', 'alias', 'database', 'tags', 'enabled', 'full_refresh', 'column_types', 'delimiter', 'quote_columns']);

export function checkConfigKeys(file: string, config: Readonly<Record<string, unknown>>, known: ReadonlySet<string>, logger: Logger): void {
  for (const k of Object.keys(config)) {
    if (!known.has(k)) logger.log('warn', `${file}: config '${k}' is not supported by service build and has no effect`);
  }
  const d = config.delimiter;
  if (d !== undefined && (typeof d !== 'string' || d.length !== 1)) throw new EngineError('load', `${file}: delimiter must be one character, got '${String(d)}'`);
}

/** dbt's materializations on our modes; `ephemeral` is inlined by the loader. */
export function materializedMode(file: string, materialized: unknown): Mode {
  switch (String(materialized).toLowerCase()) {
    case 'table':
      return 'full-refresh';
    case 'view':
      return 'view';
    case 'incremental':
      return 'incremental';
    case 'ephemeral':
      return 'view';
    default:
      throw new EngineError('compile', `${file}: materialized '${String(materialized)}' is not supported; use table, view, incremental or ephemeral`);
  }
}
