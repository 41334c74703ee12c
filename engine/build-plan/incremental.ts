/**
 * `mode: incremental`: first-run fallback, dbt style
 * (re-render with is_incremental() true, stage, merge) and service style
 * (chunks from --range, else the watermark; each chunk re-rendered with its
 * condition, staged and merged in its own transaction).
 */
import { DEFAULT_INCREMENTAL, renderModel, type IncrementalContext, type RenderEnv } from '../compile/render-model.js';
import { parseDuration, subtractDuration } from '../duration.js';
import { EngineError, errorChain } from '../errors.js';
import type { Logger } from '../log.js';
import { parseIsoUtc, rangeChunks, rfc3339 } from '../range-flag.js';
import { quoteString } from '../targets/literal.js';
import { quoteIdent } from '../targets/relation.js';
import type { TargetSession } from '../targets/target.js';
import { watermarkStore, type WatermarkStore } from '../state/watermarks.js';
import { addDuration } from '../duration.js';
import { runDbtIncremental } from './dbt-incremental.js';
import type { ModelTask, RunSettings } from './node-task.js';

export interface Bound {
  /** SQL literal. */
  readonly literal: string;
  readonly inclusive: boolean;
}

export interface Window {
  readonly lower?: Bound;
  /** SQL literal. */
  readonly upper?: string;
}

/** Condition text for a window. */
export function condition(key: string, w: Window): string {
  const k = quoteIdent(key);
  if (!w.lower && w.upper === undefined) return '1=1';
  if (w.lower && w.upper === undefined) return `${k} ${w.lower.inclusive ? '>=' : '>'} ${w.lower.literal}`;
  if (!w.lower) return `${k} < ${w.upper}`;
  return `${k} ${w.lower.inclusive ? '>=' : '>'} ${w.lower.literal} AND ${k} < ${w.upper}`;
}

const unquote = (literal: string) => (literal.startsWith("'") ? literal.slice(1, -1).replace(/''/g, "'") : literal);

function fmtDur(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

export async function runIncremental(task: ModelTask, session: TargetSession, env: RenderEnv, settings: RunSettings, logger: Logger): Promise<number> {
  if (task.dbt) return runDbtIncremental(task, session, settings);
  const name = task.name;
  const c = task.config;
  if (!c.unique_key || c.unique_key.length === 0) throw new EngineError('node', `model '${name}' uses incremental mode but has no unique_key defined in config()`);
  const opts = { modelName: name, runId: settings.runId, dropCascade: c.drop_cascade, mode: 'full-refresh' };
  // --range never reads or writes state.
  const store = settings.state && !settings.range ? watermarkStore(settings.state) : undefined;
  const save = (value: Promise<string | null>) => saveState(task, store, settings, value, logger);
  const kind = task.existing !== undefined ? task.existing : await session.relationKind(task.relation);
  const exists = kind === 'table' && !settings.fullRefresh;
  const render = (incr: IncrementalContext) => {
    const r = renderModel(env, task.recipe.model, { source: task.recipe.template, prefix: task.recipe.prefix, atRefs: task.recipe.atRefs }, incr);
    if (logger.enabled('debug')) logger.log('debug', `build[${name}]: rendered SQL:\n${r.sql}`);
    return r;
  };
  if (task.style === 'service' && c.range?.advance && !settings.range) {
    if (!store) throw new EngineError('node', `model '${name}': range.advance requires SERVICE_STATE to be configured`);
    return runAdvance(task, session, store, exists, render, settings, logger);
  }
  if (!exists) {
    const rows = (await session.fullRefresh(task.relation, task.sql, opts)).rows;
    await save(maxLiteral(task, session));
    return rows;
  }
  if (task.style === 'dbt') {
    if (settings.range) throw new EngineError('node', `model '${name}' uses is_incremental() (dbt style); --range requires incremental_where_cond() (service style)`);
    const rows = await stageAndMerge(task, session, render({ ...DEFAULT_INCREMENTAL, isIncremental: true }).sql, settings);
    await save(maxLiteral(task, session));
    return rows;
  }
  const key = c.update_key;
  if (!key) throw new EngineError('node', `model '${name}': service-style incremental requires update_key in config()`);
  const windows = settings.range ? rangeWindows(settings) : [await watermarkWindow(task, session, key, store, settings, logger)];
  let rows = 0;
  for (const [i, w] of windows.entries()) {
    const cond = condition(key, w);
    const started = Date.now();
    const shown = `${w.lower ? (w.lower.inclusive ? '[' : '(') + unquote(w.lower.literal) : '[∅'}, ${w.upper !== undefined ? unquote(w.upper) : 'now'})`;
    try {
      if (logger.enabled('debug') || windows.length === 1) logger.log('debug', `build[${name}]: condition ${cond}`);
      rows += await stageAndMerge(task, session, render({ isIncremental: true, whereCond: cond, value: w.lower?.literal ?? null }).sql, settings);
      logger.log('debug', `         chunk ${i + 1}/${windows.length}  ${key}=${shown}   OK (${fmtDur(Date.now() - started)})`);
    } catch (err) {
      logger.log('debug', `         chunk ${i + 1}/${windows.length}  ${key}=${shown}   FAIL (${fmtDur(Date.now() - started)})`);
      if (!settings.range || (err instanceof EngineError && err.code === 'cancelled')) throw err;
      const lower = w.lower ? unquote(w.lower.literal) : '';
      const lastUpper = unquote(windows.at(-1)!.upper ?? '');
      const step = settings.range.step ? `,${settings.range.step.text}` : '';
      logger.log('info', `▶ chunk ${i + 1}/${windows.length} failed — resume with:`);
      logger.log('info', `  service build run --range '${lower},${lastUpper}${step}' -s ${name}`);
      const failed = new EngineError(
        'node',
        // The record keeps the error, so it names where to resume too (the hint lines are only in the log).
        `build[${name}]: chunk ${i + 1} failed ([${lower}, ${unquote(w.upper ?? '')})); resume with --range '${lower},${lastUpper}${step}': ${errorChain(err)}`,
      );
      failed.committedRows = rows; // chunks 1..i stay committed: the record reports their rows
      throw failed;
    }
  }
  await save(maxLiteral(task, session));
  return rows;
}

async function maxLiteral(task: ModelTask, session: TargetSession): Promise<string | null> {
  return task.config.update_key ? (await session.maxValue(task.relation, task.config.update_key)).literal : null;
}

/** After success the watermark becomes `value`; a failed write only warns. */
async function saveState(task: ModelTask, store: WatermarkStore | undefined, settings: RunSettings, value: Promise<string | null>, logger: Logger): Promise<void> {
  if (!store) {
    await value.catch(() => null);
    return;
  }
  try {
    const v = await value;
    if (v !== null) await store.set(settings.targetName, task.table, v);
  } catch (err) {
    logger.log('warn', `build[${task.name}]: could not save state (${errorChain(err)})`);
  }
}

/** Paged backfill: one window per run from the stored bound, advancing by `range.advance`. */
async function runAdvance(
  task: ModelTask,
  session: TargetSession,
  store: WatermarkStore,
  exists: boolean,
  render: (incr: IncrementalContext) => { sql: string },
  settings: RunSettings,
  logger: Logger,
): Promise<number> {
  const c = task.config;
  const key = c.update_key!;
  const start = c.range?.start;
  let lower: Bound | undefined;
  const stored = exists ? await store.get(settings.targetName, task.table) : undefined;
  if (!exists) lower = start ? { literal: quoteString(start), inclusive: true } : undefined;
  else if (stored) lower = { literal: stored.value, inclusive: true };
  else if (start) lower = { literal: quoteString(start), inclusive: true };
  else {
    const max = await session.maxValue(task.relation, key);
    if (max.literal !== null) lower = { literal: max.literal, inclusive: false };
  }
  if (lower && c.range?.lookback) {
    const at = parseIsoUtc(unquote(lower.literal).replace(' ', 'T'));
    if (!at) throw new EngineError('node', `range.advance/lookback requires datetime/date update_key, got "${unquote(lower.literal)}"`);
    lower = { literal: quoteString(rfc3339(subtractDuration(at, parseDuration(c.range.lookback)))), inclusive: true };
  }
  let upper: string | undefined;
  if (lower) {
    const from = parseIsoUtc(unquote(lower.literal).replace(' ', 'T'));
    if (!from) throw new EngineError('node', `range.advance/lookback requires datetime/date update_key, got "${unquote(lower.literal)}"`);
    const now = new Date();
    if (from.getTime() >= now.getTime()) {
      logger.log('info', `model '${task.name}': range is up to date (${unquote(lower.literal)})`);
      return 0;
    }
    const next = addDuration(from, parseDuration(c.range!.advance!));
    upper = quoteString(rfc3339(next.getTime() < now.getTime() ? next : now));
  }
  const whereCond = condition(key, { lower, upper });
  logger.log('debug', `build[${task.name}]: condition ${whereCond}`);
  let rows: number;
  if (!exists) {
    const sql = render({ isIncremental: false, whereCond, value: lower?.literal ?? null }).sql;
    rows = (await session.fullRefresh(task.relation, sql, { modelName: task.name, runId: settings.runId, dropCascade: c.drop_cascade, mode: 'full-refresh' })).rows;
  } else {
    rows = await stageAndMerge(task, session, render({ isIncremental: true, whereCond, value: lower?.literal ?? null }).sql, settings);
  }
  await saveState(task, store, settings, upper !== undefined ? Promise.resolve(upper) : maxLiteral(task, session), logger);
  return rows;
}

async function stageAndMerge(task: ModelTask, session: TargetSession, sql: string, settings: RunSettings): Promise<number> {
  const opts = { modelName: task.name, runId: settings.runId, dropCascade: task.config.drop_cascade };
  const { tmp, rows } = await session.stage(task.relation, sql, opts);
  await session.merge(task.relation, tmp, task.config.unique_key!, task.config.merge_strategy, { modelName: task.name });
  return rows;
}

function rangeWindows(settings: RunSettings): Window[] {
  return rangeChunks(settings.range!).map((ch) => ({ lower: { literal: quoteString(ch.lower), inclusive: true }, upper: quoteString(ch.upper) }));
}

/** Tiers A (state), B (MAX probe) and C (no bound), with lookback. */
async function watermarkWindow(task: ModelTask, session: TargetSession, key: string, store: WatermarkStore | undefined, settings: RunSettings, logger: Logger): Promise<Window> {
  const stored = store ? await store.get(settings.targetName, task.table) : undefined;
  let bound: string | null = stored?.value ?? null;
  let category: string | undefined;
  let dataType = '';
  if (bound === null) {
    try {
      const max = await session.maxValue(task.relation, key);
      bound = max.literal;
      category = max.category;
      dataType = max.dataType;
    } catch (err) {
      if (err instanceof EngineError && err.code === 'cancelled') throw err;
      logger.log('warn', `build[${task.name}]: probe failed (${errorChain(err)}); falling through to first-run`);
      return {};
    }
  }
  if (bound === null) return {};
  const lookback = task.config.range?.lookback;
  if (!lookback) return { lower: { literal: bound, inclusive: false } };
  if (category === undefined) {
    dataType = (await session.columnType(task.relation, key)) ?? '';
    category = /date|time/i.test(dataType) ? 'timestamp' : 'other';
  }
  if (category !== 'date' && category !== 'timestamp' && category !== 'timestamptz') {
    throw new EngineError('node', `range.advance/lookback requires datetime/date update_key, got "${dataType}"`);
  }
  const at = parseIsoUtc(unquote(bound).replace(' ', 'T'));
  if (!at) throw new EngineError('node', `model '${task.name}': could not read watermark ${bound} as a date/timestamp`);
  return { lower: { literal: quoteString(rfc3339(subtractDuration(at, parseDuration(lookback)))), inclusive: true } };
}
