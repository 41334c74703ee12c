/**
 * `mode: incremental` (build.md §8–§9): first-run fallback, dbt style
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

/** §8.4 condition text for a window. */
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
  const name = task.name;
  const c = task.config;
  if (!c.unique_key || c.unique_key.length === 0) throw new EngineError('node', `model '${name}' uses incremental mode but has no unique_key defined in config()`);
  const opts = { modelName: name, runId: settings.runId, dropCascade: c.drop_cascade, mode: 'full-refresh' };
  const kind = await session.relationKind(task.relation);
  if (kind !== 'table' || settings.fullRefresh) {
    return (await session.fullRefresh(task.relation, task.sql, opts)).rows;
  }
  const render = (incr: IncrementalContext) => {
    const r = renderModel(env, task.recipe.model, { source: task.recipe.template, atRefs: task.recipe.atRefs }, incr);
    if (logger.enabled('debug')) logger.log('debug', `build[${name}]: rendered SQL:\n${r.sql}`);
    return r;
  };
  if (task.style === 'dbt') {
    if (settings.range) throw new EngineError('node', `model '${name}' uses is_incremental() (dbt style); --range requires incremental_where_cond() (service style)`);
    return stageAndMerge(task, session, render({ ...DEFAULT_INCREMENTAL, isIncremental: true }).sql, settings);
  }
  const key = c.update_key;
  if (!key) throw new EngineError('node', `model '${name}': service-style incremental requires update_key in config()`);
  const windows = settings.range ? rangeWindows(settings) : [await watermarkWindow(task, session, key, logger)];
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
      throw new EngineError('node', `build[${name}]: chunk ${i + 1} failed ([${lower}, ${unquote(w.upper ?? '')})): ${errorChain(err)}`);
    }
  }
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

/** §8.3 tiers B and C, with §8.3 lookback. */
async function watermarkWindow(task: ModelTask, session: TargetSession, key: string, logger: Logger): Promise<Window> {
  let max;
  try {
    max = await session.maxValue(task.relation, key);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'cancelled') throw err;
    logger.log('warn', `build[${task.name}]: probe failed (${errorChain(err)}); falling through to first-run`);
    return {};
  }
  if (max.literal === null) return {};
  const lookback = task.config.range?.lookback;
  if (!lookback) return { lower: { literal: max.literal, inclusive: false } };
  if (max.category !== 'date' && max.category !== 'timestamp' && max.category !== 'timestamptz') {
    throw new EngineError('node', `range.advance/lookback requires datetime/date update_key, got "${max.dataType}"`);
  }
  const at = parseIsoUtc(unquote(max.literal).replace(' ', 'T'));
  if (!at) throw new EngineError('node', `model '${task.name}': could not read watermark ${max.literal} as a date/timestamp`);
  return { lower: { literal: quoteString(rfc3339(subtractDuration(at, parseDuration(lookback)))), inclusive: true } };
}
