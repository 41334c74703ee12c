/**
 * The "physical limit" baseline of the run-overhead benchmark: the exact
 * driver calls our engine makes for a run, replayed with the same driver,
 * in the same dependency order and with the same concurrency, with nothing
 * of ours in between (the replay itself: floor/replay-floor.mjs).
 *
 * Recording: the run is executed once in this process, node after node in
 * DAG order, through the engine's own `executeNode` on a fresh schema (the
 * same state the timed runs start from), with the target drivers'
 * `query`/`batch`/`cleanup` wrapped to log each call. Replay: one plain
 * client per slot (`pg.Client` with the engine's client config; one DuckDB
 * connection), a FIFO ready queue in DAG order, and per node its recorded
 * calls sent exactly as the driver sends them (one simple-query round trip
 * per batch on PostgreSQL, results read into JS values on DuckDB).
 */
import { writeFileSync } from 'node:fs';
import type pg from 'pg';
import { prepareBuild } from '../../engine/build-plan/prepare.js';
import { planTasks } from '../../engine/build-plan/plan-tasks.js';
import { executeNode } from '../../engine/build-plan/execute-node.js';
import { wireTask } from '../../engine/build-plan/node-task.js';
import { runCatalog } from '../../engine/build-plan/run-catalog.js';
import type { Connection } from '../../engine/connections/connection.js';
import type { Logger } from '../../engine/log.js';
import { closeDuckdbInstance } from '../../engine/targets/duckdb/instance-cache.js';
import { DuckdbDriver } from '../../engine/targets/duckdb/driver.js';
import { openTarget, type SchemaRef } from '../../engine/targets/index.js';
import { PostgresDriver } from '../../engine/targets/postgres/driver.js';
import { clientConfig } from '../../engine/targets/postgres/target.js';
import { createNunjucksEngine } from '../../engine/template/nunjucks-engine.js';

type Param = string | number | boolean | null;

/** One driver call. `batch` holds the statements joined the way the PostgreSQL driver sends them. */
export type DriverCall =
  | { readonly kind: 'query'; readonly sql: string; readonly params?: readonly Param[] }
  | { readonly kind: 'batch'; readonly sql: string; readonly statements: readonly string[] }
  | { readonly kind: 'cleanup'; readonly sql: string };

export interface RecordedRun {
  readonly connection: Connection;
  /** PostgreSQL: the engine's client config for the connection (what the replay connects with). */
  readonly clientConfig?: pg.ClientConfig;
  /** Schema creation before the first node. */
  readonly setup: readonly DriverCall[];
  readonly nodes: readonly { readonly id: string; readonly deps: readonly number[]; readonly calls: readonly DriverCall[] }[];
}

const silent: Logger = { enabled: () => false, log: () => {} };

type Method = (this: unknown, ...args: unknown[]) => Promise<unknown>;

/** Wraps `proto[name]` so each call is also passed to `log`; returns the undo. */
function tap(proto: object, name: string, log: (args: unknown[]) => void): () => void {
  const target = proto as Record<string, Method>;
  const original = target[name]!;
  target[name] = function (this: unknown, ...args: unknown[]) {
    log(args);
    return original.apply(this, args);
  };
  return () => {
    target[name] = original;
  };
}

/**
 * Executes the project's `run` in-process, recording the driver calls per
 * node. `stepEnv` supplies the connections (environment-variable URLs).
 */
export async function recordRun(dir: string, targetName: string, stepEnv: Readonly<Record<string, string>>): Promise<RecordedRun> {
  const p = prepareBuild({ verb: 'run', path: dir, target: targetName, select: [], exclude: [], stepEnv }, silent);
  const connection = p.connection!;
  const tasks = planTasks(p.compiled, p.selected, 'run', false);
  const ids = tasks.map((t) => t.name.toLowerCase());
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const schemas = new Map<string, SchemaRef>();
  for (const t of tasks) schemas.set(`${t.relation.database ?? ''}.${t.relation.schema}`, t.relation.database ? { database: t.relation.database, schema: t.relation.schema } : { schema: t.relation.schema });

  let sink: DriverCall[] = [];
  const isPg = connection.type === 'postgres';
  const undo = [
    tap(isPg ? PostgresDriver.prototype : DuckdbDriver.prototype, 'query', ([sql, params]) =>
      sink.push({ kind: 'query', sql: sql as string, ...(params !== undefined ? { params: params as Param[] } : {}) }),
    ),
    tap(isPg ? PostgresDriver.prototype : DuckdbDriver.prototype, 'cleanup', ([sql]) => sink.push({ kind: 'cleanup', sql: sql as string })),
  ];
  // DuckDB's batch is a loop over query(), recorded call by call; PostgreSQL sends it as one script.
  if (isPg) undo.push(tap(PostgresDriver.prototype, 'batch', ([statements]) => sink.push({ kind: 'batch', sql: (statements as string[]).join(';\n'), statements: statements as string[] })));
  for (const name of ['copyFrom', 'appendText']) {
    const proto = (isPg ? PostgresDriver.prototype : DuckdbDriver.prototype) as object;
    if (name in proto) undo.push(tap(proto, name, () => { throw new Error(`bench replay: driver call '${name}' (seeds) is not replayable; keep seeds out of run-overhead projects`); }));
  }

  const target = openTarget(connection, { poolSize: 1 });
  const session = await target.open();
  const settings = { runId: 'benchrec', targetName: p.targetName, fullRefresh: false };
  const engine = createNunjucksEngine();
  const setup: DriverCall[] = [];
  const nodes: { id: string; deps: number[]; calls: DriverCall[] }[] = [];
  try {
    sink = setup;
    // As the run does (build.setup): create the schemas, read their catalog once, and tell each model what its relation is.
    const schemaList = [...schemas.values()];
    await session.createSchemas(schemaList);
    const catalog = runCatalog(await session.catalog(schemaList), schemaList);
    for (const [i, task] of tasks.entries()) {
      const calls: DriverCall[] = [];
      sink = calls;
      await executeNode(wireTask(task, catalog), { session, settings, logger: silent, engine });
      const deps = p.selected[i]!.dependencies.map((d) => indexOf.get(d.toLowerCase())).filter((j): j is number => j !== undefined);
      nodes.push({ id: ids[i]!, deps, calls });
    }
  } finally {
    for (const u of undo) u();
    await session.close().catch(() => {});
    await target.close().catch(() => {});
    if (connection.type === 'duckdb') await closeDuckdbInstance(connection.path);
  }
  return { connection, ...(connection.type === 'postgres' ? { clientConfig: clientConfig(connection) } : {}), setup, nodes };
}

/** Writes a recording for `node floor/replay-floor.mjs <file> …`. */
export function writeRecording(rec: RecordedRun, file: string): void {
  writeFileSync(file, JSON.stringify(rec));
}

export { replayDuckdb, replayPostgres, scheduleDag, type ReplayTimes } from '../floor/replay-floor.mjs';

/** The same recording with every statement's text passed through `edit` (e.g. a different sleep literal). */
export function mapRecording(rec: RecordedRun, edit: (sql: string) => string): RecordedRun {
  const call = (c: DriverCall): DriverCall => (c.kind === 'batch' ? { ...c, sql: edit(c.sql), statements: c.statements.map(edit) } : { ...c, sql: edit(c.sql) });
  return { ...rec, setup: rec.setup.map(call), nodes: rec.nodes.map((n) => ({ ...n, calls: n.calls.map(call) })) };
}
