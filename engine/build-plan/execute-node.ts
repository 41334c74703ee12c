/**
 * Executes one node on a target session: model =
 * pre-statements → materialize → post-statements → data tests; seed = read
 * and load; test = data tests only. The same function runs in a Piscina
 * worker (PostgreSQL) and in the DuckDB actor; failures are EngineErrors
 * with the documented messages, and a success carries its test warnings. A
 * model whose data test fails after it was written resolves with `failure`
 * set, so its rows survive the thread boundary (errors carry only text).
 */
import { statSync } from 'node:fs';
import type { RenderEnv } from '../compile/render-model.js';
import { EngineError, errorChain } from '../errors.js';
import { importNear } from '../lazy-import.js';
import type { Logger } from '../log.js';
import { dataTestExecPrefix, dataTestFailedMessage, dataTestSql } from '../targets/data-test-sql.js';
import { seedLoadFailed } from '../targets/materialize-errors.js';
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { TargetSession } from '../targets/target.js';
import type { TemplateEngine } from '../template/template-engine.js';
import type { StoredFailures } from '../project/data-tests.js';
import { conditionHolds, failingRowsOf } from '../project/dbt/dbt-tests.js';
import { runDbtSnapshot } from './dbt-snapshot.js';
import type { ModelTask, NodeOutcome, PlannedTest, RunSettings, SeedTask, TestResult, TestTask, WireModelTask, WireTask } from './node-task.js';

export interface ExecuteContext {
  readonly session: TargetSession;
  readonly settings: RunSettings;
  readonly logger: Logger;
  /**
   * One engine per thread: compiled templates are cached across this
   * thread's tasks. Only incremental models render here, so a host may pass
   * a loader and pay for the template engine on the first of them.
   */
  readonly engine: TemplateEngine | (() => Promise<TemplateEngine>);
}

// Loaded by the first node that needs them: a worker thread running plain
// models never loads the template engine, the watermark store or the seed
// parsers (≈0.1 s of a worker's start-up on 2 cores).
const near = <M>(specifier: string) => importNear<M>(import.meta.url, specifier);
const incremental = () => near<typeof import('./incremental.js')>('./incremental.js');
const seedTable = () => near<typeof import('../seeds/seed-table.js')>('../seeds/seed-table.js');
const nodeIndex = () => near<typeof import('../compile/node-index.js')>('../compile/node-index.js');
const liveRender = () => near<typeof import('../project/dbt/live-render.js')>('../project/dbt/live-render.js');

/** A dbt test that asks the database while it renders: its count query rendered now (live-render.ts). */
async function liveTests(task: TestTask, ctx: ExecuteContext): Promise<readonly PlannedTest[]> {
  const { renderLive, queryTable, liveEngine } = await liveRender();
  const { sql } = await renderLive(await liveEngine(), task.live!, async (q) => queryTable(await ctx.session.query(q)), ctx.logger);
  return task.tests.map((t) => (t.test.kind === 'sql' ? { ...t, test: { ...t.test, sql } } : t));
}

/** A dbt model that asks the database while it renders: rendered now, its parents built (live-render.ts). */
async function withLiveSql(task: WireModelTask, ctx: ExecuteContext): Promise<WireModelTask> {
  if (task.live === undefined) return task;
  const { renderLive, queryTable, liveEngine } = await liveRender();
  try {
    const out = await renderLive(await liveEngine(), task.live, async (sql) => queryTable(await ctx.session.query(sql)), ctx.logger);
    return { ...task, sql: out.sql, ...(out.incrementalSql !== undefined && task.dbt ? { dbt: { ...task.dbt, incrementalSql: out.incrementalSql } } : {}) };
  } catch (err) {
    if (err instanceof EngineError && err.code === 'cancelled') throw err;
    throw EngineError.wrap(`could not compile model '${task.name}'`, err, 'node');
  }
}

export async function executeNode(task: WireTask, ctx: ExecuteContext): Promise<NodeOutcome> {
  switch (task.kind) {
    case 'model':
      return executeModel(task, ctx);
    case 'seed':
      return executeSeed(task, ctx);
    case 'test': {
      const tests: TestResult[] = [];
      try {
        const planned = task.live === undefined ? task.tests : await liveTests(task, ctx);
        return { rows: 0, bytes: 0, warnings: await runTests(task.name, planned, task.relation, ctx.session, ctx.logger, tests, task.on ?? task.table), tests };
      } catch (err) {
        if (err instanceof EngineError && err.code === 'cancelled') throw err;
        // The node fails with the same text; the outcome keeps which tests ran.
        return { rows: 0, bytes: 0, warnings: [], failure: errorChain(err), tests };
      }
    }
  }
}

async function executeModel(wire: WireModelTask, ctx: ExecuteContext): Promise<NodeOutcome> {
  const { session, settings } = ctx;
  const task = await withLiveSql(wire, ctx);
  const opts = { modelName: task.name, runId: settings.runId, dropCascade: task.config.drop_cascade, ...(task.existing !== undefined ? { existing: task.existing } : {}) };
  for (const [i, stmt] of task.pre.entries()) {
    await session.exec(stmt).catch((err) => {
      throw EngineError.wrap(`pre-statement ${i + 1} failed for model '${task.name}'`, err, 'node');
    });
  }
  let rows = 0;
  const mode = task.dbt?.snapshot ? 'snapshot' : task.mode;
  switch (mode) {
    case 'snapshot':
      rows = await runDbtSnapshot(task, session, settings);
      break;
    case 'full-refresh':
      rows = (await session.fullRefresh(task.relation, task.sql, opts)).rows;
      break;
    case 'view':
      await session.view(task.relation, task.sql, opts);
      break;
    case 'truncate':
      rows = (await session.truncate(task.relation, task.sql, opts)).rows;
      break;
    case 'append':
      rows = (await session.append(task.relation, task.sql, opts)).rows;
      break;
    case 'incremental':
      if (task.recipe === undefined) throw new EngineError('internal', `model '${task.name}': incremental task sent without its render recipe`);
      rows = await (await incremental()).runIncremental(task as ModelTask, session, await renderEnv(task as ModelTask, ctx), settings, ctx.logger);
      break;
    default:
      throw new EngineError('node', `model '${task.name}': unknown mode '${task.mode}'`);
  }
  for (const [i, stmt] of task.post.entries()) {
    await session.exec(stmt).catch((err) => {
      throw EngineError.wrap(`post-statement ${i + 1} failed for model '${task.name}'`, err, 'node');
    });
  }
  const tests: TestResult[] = [];
  const compiled = task.live !== undefined ? { compiledSql: task.sql } : {};
  try {
    return { rows, bytes: 0, warnings: await runTests(task.name, task.tests, task.relation, session, ctx.logger, tests, task.table), tests, ...compiled };
  } catch (err) {
    if (err instanceof EngineError && err.code === 'cancelled') throw err;
    return { rows, bytes: 0, warnings: [], failure: errorChain(err), tests, ...compiled };
  }
}

async function renderEnv(task: ModelTask, ctx: ExecuteContext): Promise<RenderEnv> {
  const r = task.recipe;
  const { NodeIndex } = await nodeIndex();
  return {
    engine: typeof ctx.engine === 'function' ? await ctx.engine() : ctx.engine,
    index: new NodeIndex(r.refs),
    macros: { prefixFor: () => '' },
    vars: r.vars,
    target: r.target,
    logger: ctx.logger,
    stepEnv: r.stepEnv,
  };
}

/**
 * Runs tests in order; a warn-severity violation is logged (WRN)
 * and collected, an error-severity one (or a query error) fails the node
 * with every message so far joined by `; `.
 */
export async function runTests(
  model: string,
  tests: readonly PlannedTest[],
  relation: WireModelTask['relation'],
  session: TargetSession,
  logger: Logger,
  results: TestResult[] = [],
  node = model,
): Promise<string[]> {
  const messages: string[] = [];
  for (const { test, parent } of tests) {
    const q = dataTestSql(test, relation, parent);
    const result = (status: TestResult['status'], violations: number | null) => results.push({ node, test: q.label, status, violations, severity: test.severity });
    let violations: number;
    try {
      violations = test.kind === 'sql' && test.store !== undefined ? await storeFailures(session, test.store, q.sql) : await session.countQuery(q.sql);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'cancelled') throw err;
      result('error', null);
      const failed = EngineError.wrap(dataTestExecPrefix(model, q.label), err, 'node');
      throw messages.length > 0 ? EngineError.wrap(messages.join('; '), failed, 'node') : failed;
    }
    // dbt tests carry their own conditions on the count (error_if / warn_if); ours fail on any violation.
    const severity = test.kind === 'sql' ? dbtSeverity(test, violations) : violations === 0 ? undefined : test.severity;
    if (severity === undefined) {
      result('pass', violations);
      continue;
    }
    const message = test.kind === 'sql' ? `test '${q.label}' failed: ${violations} failing row(s)${severity === 'warn' ? ' (severity: warn)' : ''}` : dataTestFailedMessage(model, q.label, violations, severity);
    messages.push(message);
    result(severity === 'error' ? 'fail' : 'warn', violations);
    if (severity === 'error') throw new EngineError('node', messages.join('; '));
    logger.log('warn', message);
  }
  return messages;
}

/**
 * dbt's store_failures: the failing rows replace the test's audit relation
 * (its schema created when missing), then its fail_calc counts them there.
 * Only that one relation is dropped, never with CASCADE.
 */
async function storeFailures(session: TargetSession, store: StoredFailures, countSql: string): Promise<number> {
  const rel = store.relation;
  const rows = failingRowsOf(countSql, store.failCalc);
  await session.createSchemas([{ ...(rel.database !== undefined ? { database: rel.database } : {}), schema: rel.schema }]);
  const kind = await session.relationKind(rel);
  if (kind !== null) await session.dropRelation(rel, kind, false);
  await session.exec(`create ${store.as} ${quoteRelation(rel)} as (\n${rows}\n)`);
  return session.countQuery(`select ${store.failCalc} from ${quoteRelation(rel)}`);
}

/** dbt: an error when severity is error and error_if holds, else a warning when warn_if holds, else a pass. */
function dbtSeverity(test: Extract<PlannedTest['test'], { kind: 'sql' }>, count: number): 'error' | 'warn' | undefined {
  if (test.severity === 'error' && conditionHolds(test.errorIf, count)) return 'error';
  return conditionHolds(test.warnIf, count) ? 'warn' : undefined;
}

async function executeSeed(task: SeedTask, ctx: ExecuteContext): Promise<NodeOutcome> {
  const bytes = statSync(task.file).size;
  const opts = { seedName: task.name, runId: ctx.settings.runId, dropCascade: task.dbt?.dropCascade ?? false };
  if (task.format === 'parquet') {
    const { rows } = await ctx.session.loadSeed(task.relation, { kind: 'parquet', file: task.file }, opts);
    return { rows, bytes, warnings: [] };
  }
  const types = task.dbt?.columnTypes ?? {};
  const table = await (await seedTable()).readSeedTable(task.name, task.file, task.format, { delimiter: task.dbt?.delimiter, foldColumns: task.dbt?.foldColumns, textColumns: Object.keys(types) });
  try {
    const { rows } = await ctx.session.loadSeed(task.relation, { kind: 'table', table }, opts);
    for (const [col, type] of Object.entries(types)) {
      const c = quoteIdent(col);
      await ctx.session.exec(`ALTER TABLE ${quoteRelation(task.relation)} ALTER COLUMN ${c} TYPE ${type} USING CAST(${c} AS ${type})`).catch((err) => {
        throw EngineError.wrap(`seed '${task.name}': column_types: could not make column '${col}' ${type}`, err, 'node');
      });
    }
    return { rows, bytes, warnings: [] };
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw seedLoadFailed(task.name, task.relation, err);
  }
}
