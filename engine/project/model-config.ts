/**
 * A model's effective configuration: `defaults` from the config file, then
 * front-matter keys, or at render time `config()`
 * when there is no front-matter. Validation messages are the documented.
 */
import { EngineError } from '../errors.js';
import { parseDuration } from '../duration.js';
import type { Logger } from '../log.js';
import type { Defaults } from './config.js';
import { parseDataTest, type DataTest } from './data-tests.js';
import { isMergeStrategy, mergeStrategyError, resolveMaterializedValue, resolveModeValue, type MergeStrategy, type Mode } from './modes.js';

export interface RangeConfig {
  readonly start?: string;
  readonly advance?: string;
  readonly lookback?: string;
}

export interface ModelConfig {
  readonly mode: Mode;
  readonly unique_key?: readonly string[];
  readonly update_key?: string;
  readonly merge_strategy: MergeStrategy;
  readonly tags: readonly string[];
  readonly hooks: { readonly start: readonly unknown[]; readonly end: readonly unknown[] };
  readonly schema?: string;
  readonly database?: string;
  readonly enabled: boolean;
  readonly drop_cascade: boolean;
  readonly rewrite: boolean;
  readonly range?: RangeConfig;
  /** Entries as written (compile shows them verbatim). */
  readonly tests: readonly unknown[];
  readonly engine?: string;
}

export type IncrementalStyle = 'service' | 'dbt';

const FM_KEYS = new Set(['mode', 'materialized', 'unique_key', 'update_key', 'merge_strategy', 'tags', 'hooks', 'schema', 'database', 'enabled', 'drop_cascade', 'rewrite', 'range', 'tests', 'engine']);
const CONFIG_KEYS = new Set(['mode', 'materialized', 'unique_key', 'update_key', 'merge_strategy', 'tags', 'schema', 'database', 'enabled', 'engine', 'drop_cascade', 'rewrite']);

const fail = (name: string, msg: string, code: 'load' | 'compile' = 'load') => new EngineError(code, `model '${name}': ${msg}`);

function keyList(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(String);
  return [String(v)];
}

function uniq(list: readonly string[]): string[] {
  return [...new Set(list)];
}

export function defaultModelConfig(d: Defaults): ModelConfig {
  return {
    mode: d.mode,
    unique_key: keyList(d.unique_key),
    update_key: d.update_key,
    merge_strategy: d.merge_strategy,
    tags: [...d.tags],
    hooks: d.hooks,
    schema: d.schema,
    database: d.database,
    enabled: d.enabled,
    drop_cascade: d.drop_cascade,
    rewrite: true,
    tests: [],
  };
}

function modeFrom(name: string, kv: Record<string, unknown>, logger: Logger, code: 'load' | 'compile'): Mode | undefined {
  if (kv.mode !== undefined && kv.mode !== null) {
    const r = resolveModeValue(kv.mode);
    if (!r.ok) throw fail(name, r.error, code);
    if (r.warning) logger.log('warn', `model '${name}': 'snapshot' mode is deprecated and means append-only insert; use 'append'. 'snapshot' will mean SCD2 in a future release`);
    return r.mode;
  }
  if (kv.materialized !== undefined && kv.materialized !== null) {
    const r = resolveMaterializedValue(kv.materialized);
    if (!r.ok) throw fail(name, r.error, code);
    return r.mode;
  }
  return undefined;
}

function str(name: string, key: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object') throw fail(name, `front-matter key '${key}' must be a string`);
  return String(v);
}

function bool(name: string, key: string, v: unknown, fallback: boolean): boolean {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw fail(name, `front-matter key '${key}' must be true or false, got '${String(v)}'`);
  return v;
}

/** Defaults + front-matter. Front-matter keys replace defaults, except tags (union) and hooks (concatenated). */
export function mergeFrontMatter(name: string, base: ModelConfig, fm: Record<string, unknown>, logger: Logger): ModelConfig {
  if ('pre_hook' in fm || 'post_hook' in fm) {
    throw new EngineError('load', 'pre_hook/post_hook are not supported in service build frontmatter. Use hooks.start/hooks.end instead.');
  }
  for (const k of Object.keys(fm)) if (!FM_KEYS.has(k)) logger.log('warn', `model '${name}': unknown front-matter key '${k}' (ignored)`);
  if (fm.merge_strategy !== undefined && !isMergeStrategy(fm.merge_strategy)) throw fail(name, mergeStrategyError(fm.merge_strategy));
  const tags = fm.tags === undefined || fm.tags === null ? [] : Array.isArray(fm.tags) ? fm.tags.map(String) : [String(fm.tags)];
  const hooks = (fm.hooks ?? {}) as { start?: unknown; end?: unknown };
  if (typeof hooks !== 'object' || Array.isArray(hooks)) throw new EngineError('load', `could not parse hooks for model '${name}'`);
  const list = (v: unknown) => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
  const range = fm.range;
  if (range !== undefined && range !== null && (typeof range !== 'object' || Array.isArray(range))) throw fail(name, `front-matter key 'range' must be a mapping with start, advance and lookback`);
  const tests = fm.tests === undefined || fm.tests === null ? [] : fm.tests;
  if (!Array.isArray(tests)) throw fail(name, `front-matter key 'tests' must be a list`);
  const r = range as Record<string, unknown> | undefined | null;
  return {
    mode: modeFrom(name, fm, logger, 'load') ?? base.mode,
    unique_key: 'unique_key' in fm ? keyList(fm.unique_key) : base.unique_key,
    update_key: 'update_key' in fm ? str(name, 'update_key', fm.update_key) : base.update_key,
    merge_strategy: fm.merge_strategy !== undefined ? (String(fm.merge_strategy).trim().toLowerCase() as MergeStrategy) : base.merge_strategy,
    tags: uniq([...base.tags, ...tags]),
    hooks: { start: [...base.hooks.start, ...list(hooks.start)], end: [...base.hooks.end, ...list(hooks.end)] },
    schema: 'schema' in fm ? str(name, 'schema', fm.schema) : base.schema,
    database: 'database' in fm ? str(name, 'database', fm.database) : base.database,
    enabled: bool(name, 'enabled', fm.enabled, base.enabled),
    drop_cascade: bool(name, 'drop_cascade', fm.drop_cascade, base.drop_cascade),
    rewrite: bool(name, 'rewrite', fm.rewrite, base.rewrite),
    range: r ? { start: str(name, 'range.start', r.start), advance: str(name, 'range.advance', r.advance), lookback: str(name, 'range.lookback', r.lookback) } : undefined,
    tests,
    engine: str(name, 'engine', fm.engine) ?? base.engine,
  };
}

/** `config(**kw)` at render time, applied on top of the defaults-based config. */
export function applyConfigCall(name: string, base: ModelConfig, kw: Record<string, unknown>, logger: Logger): ModelConfig {
  if ('pre_hook' in kw || 'post_hook' in kw) {
    throw new EngineError('compile', 'pre_hook/post_hook are not supported in service build config(). Use YAML frontmatter with hooks.start/hooks.end instead.');
  }
  for (const k of Object.keys(kw)) if (!CONFIG_KEYS.has(k)) logger.log('warn', `model '${name}': unrecognized config key '${k}' (ignored)`);
  if (kw.merge_strategy !== undefined && !isMergeStrategy(kw.merge_strategy)) throw fail(name, mergeStrategyError(kw.merge_strategy), 'compile');
  if ('schema' in kw || 'database' in kw) logger.log('warn', `model '${name}': config(schema=...) does not change the table name; use front-matter schema: instead`);
  const b = (k: string, fb: boolean) => (kw[k] === undefined ? fb : kw[k] === true || String(kw[k]).toLowerCase() === 'true');
  return {
    ...base,
    mode: modeFrom(name, kw, logger, 'compile') ?? base.mode,
    unique_key: 'unique_key' in kw ? keyList(kw.unique_key) : base.unique_key,
    update_key: 'update_key' in kw ? String(kw.update_key) : base.update_key,
    merge_strategy: kw.merge_strategy !== undefined ? (String(kw.merge_strategy).trim().toLowerCase() as MergeStrategy) : base.merge_strategy,
    tags: 'tags' in kw ? (keyList(kw.tags) ?? []) : base.tags,
    enabled: b('enabled', base.enabled),
    drop_cascade: b('drop_cascade', base.drop_cascade),
    rewrite: b('rewrite', base.rewrite),
    engine: kw.engine !== undefined ? String(kw.engine) : base.engine,
  };
}

/** Incremental style on the raw text after front-matter removal. */
export function incrementalStyle(name: string, body: string): IncrementalStyle {
  // Every marker below contains "incremental": most models are one scan.
  if (!body.includes('incremental')) return 'dbt';
  if (body.includes('{incremental_where_cond}') || body.includes('{incremental_value}')) {
    throw fail(name, 'use {{ incremental_where_cond() }} or {{ incremental_value() }} instead of {incremental_where_cond} / {incremental_value}');
  }
  const service = body.includes('incremental_where_cond(') || body.includes('incremental_value(');
  if (service && body.includes('is_incremental(')) {
    throw fail(name, 'cannot mix is_incremental() and incremental_where_cond() in the same model. Choose one pattern: either dbt-compatible (is_incremental() + {{ this }}) or service-native ({{ incremental_where_cond() }})');
  }
  return service ? 'service' : 'dbt';
}

/** Load-time checks on the merged config; returns the validated tests. */
export function validateModelConfig(name: string, c: ModelConfig, style: IncrementalStyle): DataTest[] {
  if (c.mode === 'incremental' && !c.update_key) throw fail(name, "mode 'incremental' requires update_key");
  if (c.range) {
    const { start, advance, lookback } = c.range;
    if (start !== undefined && advance === undefined) throw fail(name, 'range.start requires range.advance');
    if (c.mode !== 'incremental') throw fail(name, 'range.* requires mode: incremental');
    if (advance !== undefined && !c.update_key) throw fail(name, 'range.advance requires update_key');
    for (const [k, v] of [['advance', advance], ['lookback', lookback]] as const) {
      if (v === undefined) continue;
      try {
        parseDuration(v);
      } catch (err) {
        throw fail(name, `invalid range.${k}: ${(err as Error).message}`);
      }
    }
    if (style === 'dbt') throw fail(name, 'range.* requires incremental_where_cond() (service style); is_incremental() is not compatible with range.*');
  }
  return c.tests.map((t, i) => parseDataTest(name, i + 1, t));
}
