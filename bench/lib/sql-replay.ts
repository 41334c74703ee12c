/**
 * The "physical limit" baseline of the run-overhead benchmark: the exact
 * driver calls our engine makes for a run, replayed with the same driver,
 * in the same dependency order and with the same concurrency, with nothing
 * of ours in between.
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
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import pg from 'pg';
import { prepareBuild } from '../../engine/build/prepare.js';
import { planTasks } from '../../engine/build/plan-tasks.js';
import { executeNode } from '../../engine/build/execute-node.js';
import type { Connection, PostgresConnection } from '../../engine/connections/connection.js';
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
    await session.createSchemas([...schemas.values()]);
    for (const [i, task] of tasks.entries()) {
      const calls: DriverCall[] = [];
      sink = calls;
      await executeNode(task, { session, settings, logger: silent, engine });
      const deps = p.selected[i]!.dependencies.map((d) => indexOf.get(d.toLowerCase())).filter((j): j is number => j !== undefined);
      nodes.push({ id: ids[i]!, deps, calls });
    }
  } finally {
    for (const u of undo) u();
    await session.close().catch(() => {});
    await target.close().catch(() => {});
    if (connection.type === 'duckdb') await closeDuckdbInstance(connection.path);
  }
  return { connection, setup, nodes };
}

/**
 * Runs `run(i, slot)` for every node once its parents finished, at most
 * `concurrency` at a time, starting ready nodes in FIFO order (ties in DAG
 * order) — the policy of our supervisor, without its messages.
 */
export function scheduleDag(deps: readonly (readonly number[])[], concurrency: number, run: (i: number, slot: number) => Promise<void>): Promise<void> {
  const n = deps.length;
  const waiting = deps.map((d) => d.length);
  const children: number[][] = deps.map(() => []);
  deps.forEach((d, i) => d.forEach((p) => children[p]!.push(i)));
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  const free = Array.from({ length: concurrency }, (_, s) => concurrency - 1 - s);
  let head = 0;
  let finished = 0;
  return new Promise((resolve, reject) => {
    if (n === 0) return resolve();
    const pump = () => {
      while (head < ready.length && free.length > 0) {
        const i = ready[head++]!;
        const slot = free.pop()!;
        run(i, slot).then(() => {
          free.push(slot);
          finished++;
          for (const c of children[i]!) if (--waiting[c]! === 0) ready.push(c);
          if (finished === n) resolve();
          else pump();
        }, reject);
      }
    };
    pump();
  });
}

async function pgCall(client: pg.Client, call: DriverCall): Promise<void> {
  switch (call.kind) {
    case 'query':
      await client.query(call.params === undefined ? { text: call.sql, rowMode: 'array' } : { text: call.sql, values: [...call.params], rowMode: 'array' });
      return;
    case 'batch':
      await client.query(call.sql);
      return;
    case 'cleanup':
      await client.query(call.sql).catch(() => {});
  }
}

/** Replays on PostgreSQL with `threads` connections; resolves to the wall time in ms (connecting included). */
export async function replayPostgres(rec: RecordedRun, threads: number): Promise<number> {
  const config = clientConfig(rec.connection as PostgresConnection);
  const t0 = performance.now();
  const clients = await Promise.all(
    Array.from({ length: threads }, async () => {
      const c = new pg.Client(config);
      c.on('error', () => {});
      await c.connect();
      return c;
    }),
  );
  try {
    for (const call of rec.setup) await pgCall(clients[0]!, call);
    await scheduleDag(
      rec.nodes.map((n) => n.deps),
      threads,
      async (i, slot) => {
        for (const call of rec.nodes[i]!.calls) await pgCall(clients[slot]!, call);
      },
    );
    return performance.now() - t0;
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
}

async function duckCall(conn: DuckDBConnection, call: DriverCall): Promise<void> {
  switch (call.kind) {
    case 'query':
      (await conn.runAndReadAll(call.sql, call.params === undefined ? undefined : [...call.params])).getRowsJS();
      return;
    case 'batch':
      for (const sql of call.statements) (await conn.runAndReadAll(sql)).getRowsJS();
      return;
    case 'cleanup':
      await conn.run(call.sql).catch(() => {});
  }
}

/** Replays on a fresh DuckDB file with one connection (single writer, as our run); wall time in ms, opening included. */
export async function replayDuckdb(rec: RecordedRun, file: string): Promise<number> {
  const t0 = performance.now();
  const instance = await DuckDBInstance.create(file);
  const conn = await instance.connect();
  try {
    for (const call of rec.setup) await duckCall(conn, call);
    await scheduleDag(
      rec.nodes.map((n) => n.deps),
      1,
      async (i) => {
        for (const call of rec.nodes[i]!.calls) await duckCall(conn, call);
      },
    );
    return performance.now() - t0;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** The same recording with every statement's text passed through `edit` (e.g. a different sleep literal). */
export function mapRecording(rec: RecordedRun, edit: (sql: string) => string): RecordedRun {
  const call = (c: DriverCall): DriverCall => (c.kind === 'batch' ? { ...c, sql: edit(c.sql), statements: c.statements.map(edit) } : { ...c, sql: edit(c.sql) });
  return { ...rec, setup: rec.setup.map(call), nodes: rec.nodes.map((n) => ({ ...n, calls: n.calls.map(call) })) };
}
