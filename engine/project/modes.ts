/**
 * Materialization modes, their aliases, and merge strategies.
 * One table each so the config file, front-matter and config() validate the
 * same way with the same messages.
 */

export const MODES = ['append', 'full-refresh', 'incremental', 'truncate', 'view'] as const;
export type Mode = (typeof MODES)[number];

export const MERGE_STRATEGIES = ['delete+insert', 'update+insert', 'insert'] as const;
export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

export type ModeResult =
  | { readonly ok: true; readonly mode: Mode; readonly warning?: string }
  | { readonly ok: false; readonly error: string };

const MODE_LIST = MODES.join(', ');

/** `mode:` values. `label` prefixes messages (`model 'x'` or `<file>: defaults.mode`). */
export function resolveModeValue(raw: unknown): ModeResult {
  const v = String(raw).trim().toLowerCase();
  if ((MODES as readonly string[]).includes(v)) return { ok: true, mode: v as Mode };
  if (v === 'table') return { ok: true, mode: 'full-refresh' };
  if (v === 'snapshot') return { ok: true, mode: 'append', warning: 'snapshot' };
  if (v === 'ephemeral') return { ok: false, error: 'ephemeral models are not supported; use view or table' };
  return { ok: false, error: `unknown mode '${String(raw)}'; expected one of: ${MODE_LIST}` };
}

/** dbt's `materialized:` values. */
export function resolveMaterializedValue(raw: unknown): ModeResult {
  const v = String(raw).trim().toLowerCase();
  if (v === 'view' || v === 'incremental') return { ok: true, mode: v };
  if (v === 'table') return { ok: true, mode: 'full-refresh' };
  if (v === 'ephemeral') return { ok: false, error: 'ephemeral models are not supported; use view or table' };
  if (v === 'materialized_view' || v === 'materializedview') return { ok: false, error: `materialized '${String(raw)}' is not supported; use view or table` };
  return { ok: false, error: `unknown materialized value '${String(raw)}'; expected table, view, or incremental` };
}

export function isMergeStrategy(v: unknown): v is MergeStrategy {
  return typeof v === 'string' && (MERGE_STRATEGIES as readonly string[]).includes(v.trim().toLowerCase());
}

export const mergeStrategyError = (s: unknown) =>
  `unknown merge_strategy '${String(s)}'; expected one of: ${MERGE_STRATEGIES.join(', ')}`;
