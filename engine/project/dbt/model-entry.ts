/**
 * One dbt model (or snapshot) entry on its way to a node: its effective
 * config as our model config, its incremental run, its snapshot spec, and
 * its `persist_docs` comments. Pure functions of the entry.
 */
import { EngineError } from '../../errors.js';
import type { DbtModelRun, DbtSnapshotSpec } from '../../build-plan/node-task.js';
import type { ModelConfig } from '../model-config.js';
import type { NodeName } from '../naming.js';
import type { DbtFile } from './dbt-files.js';
import type { DbtRelation } from './dbt-context.js';
import type { ResourceProps } from './properties.js';

export interface ModelEntry {
  readonly f: DbtFile;
  readonly name: string;
  readonly body: string;
  readonly props?: ResourceProps;
  /** A `{% snapshot %}` block rather than a model file. */
  readonly snapshot?: boolean;
  config: Record<string, unknown>;
  naming?: NodeName;
  relation?: DbtRelation;
  sql?: string;
  incrementalSql?: string;
  deps?: Set<string>;
  /** Its render asked the database: rendered again when it runs (live-render.ts). */
  deferred?: boolean;
  pre?: string[];
  post?: string[];
}

export function modelConfig(m: ModelEntry, mode: ModelConfig['mode']): ModelConfig {
  const c = m.config;
  const key = c.unique_key;
  return {
    mode,
    ...(key !== undefined && key !== null ? { unique_key: Array.isArray(key) ? key.map(String) : [String(key)] } : {}),
    merge_strategy: 'delete+insert',
    tags: Array.isArray(c.tags) ? c.tags.map(String) : c.tags ? [String(c.tags)] : [],
    hooks: { start: [], end: [] },
    schema: m.naming!.schema,
    enabled: true,
    // dbt replaces a relation with its dependents dropped (they are rebuilt later in the same run).
    drop_cascade: true,
    rewrite: false,
    tests: [],
  };
}

export function incrementalRun(m: ModelEntry): DbtModelRun {
  const c = m.config;
  const hasKey = c.unique_key !== undefined && c.unique_key !== null;
  const strategy = String(c.incremental_strategy ?? (hasKey ? 'delete+insert' : 'append'));
  if (!['append', 'merge', 'delete+insert'].includes(strategy)) {
    throw new EngineError('compile', `${m.f.file}: incremental_strategy '${strategy}' is not supported; use append, merge or delete+insert`);
  }
  if (strategy !== 'append' && !hasKey) throw new EngineError('compile', `${m.f.file}: incremental_strategy '${strategy}' needs a unique_key`);
  const osc = String(c.on_schema_change ?? 'ignore');
  if (!['ignore', 'append_new_columns', 'fail'].includes(osc)) {
    throw new EngineError('compile', `${m.f.file}: on_schema_change '${osc}' is not supported; use ignore, append_new_columns or fail`);
  }
  return {
    ...(m.incrementalSql !== undefined ? { incrementalSql: m.incrementalSql } : {}),
    strategy: strategy as DbtModelRun['strategy'],
    onSchemaChange: osc as DbtModelRun['onSchemaChange'],
    ...(c.full_refresh === false ? { fullRefresh: false } : {}),
  };
}

export function snapshotSpec(m: ModelEntry): DbtSnapshotSpec {
  const c = m.config;
  const fail = (msg: string) => new EngineError('compile', `${m.f.file}: snapshot '${m.name}': ${msg}`);
  const key = c.unique_key;
  if (key === undefined || key === null || key === '') throw fail('unique_key is required');
  const strategy = String(c.strategy ?? '');
  if (strategy !== 'timestamp' && strategy !== 'check') throw fail(`strategy must be timestamp or check, got '${strategy}'`);
  if (strategy === 'timestamp' && typeof c.updated_at !== 'string') throw fail("the timestamp strategy needs updated_at");
  const cc = c.check_cols;
  if (strategy === 'check' && cc !== 'all' && !Array.isArray(cc)) throw fail("the check strategy needs check_cols: 'all' or a list of columns");
  const hard = c.hard_deletes ?? (c.invalidate_hard_deletes === true ? 'invalidate' : 'ignore');
  if (hard !== 'ignore' && hard !== 'invalidate') throw fail(`hard_deletes '${String(hard)}' is not supported; use ignore or invalidate`);
  return {
    strategy,
    uniqueKey: Array.isArray(key) ? key.map(String) : [String(key)],
    ...(typeof c.updated_at === 'string' ? { updatedAt: c.updated_at } : {}),
    checkCols: cc === 'all' || cc === undefined ? 'all' : (cc as unknown[]).map(String),
    invalidateHardDeletes: hard === 'invalidate',
  };
}

/** persist_docs: the properties file's descriptions as database comments. */
export function persistDocs(m: ModelEntry): string[] {
  const pd = (m.config.persist_docs ?? {}) as { relation?: boolean; columns?: boolean };
  if (!m.props || (!pd.relation && !pd.columns)) return [];
  const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const kind = m.config.materialized === 'view' || m.config.materialized === undefined ? 'VIEW' : 'TABLE';
  const out: string[] = [];
  if (pd.relation && m.props.description) out.push(`COMMENT ON ${kind} ${m.relation!.toString()} IS ${lit(m.props.description)}`);
  if (pd.columns) {
    for (const c of m.props.columns) if (c.description) out.push(`COMMENT ON COLUMN ${m.relation!.toString()}.${/^[a-z_][a-z0-9_]*$/.test(c.name) ? c.name : `"${c.name}"`} IS ${lit(c.description)}`);
  }
  return out;
}
