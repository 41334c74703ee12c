/**
 * Runs one stream (one task) end to end, choosing the path by the pair of
 * connection types:
 *
 * | source → target | where it runs | how rows move |
 * |---|---|---|
 * | PostgreSQL → PostgreSQL | worker | COPY TO STDOUT piped into COPY FROM STDIN (text) |
 * | PostgreSQL → DuckDB | target file's actor | binary COPY decoded into column blocks, INSERT from a table function |
 * | DuckDB → PostgreSQL | source file's actor | CSV written by DuckDB into a named pipe, COPY FROM STDIN |
 * | DuckDB → DuckDB | actor(s) | same file: INSERT … SELECT; other file: via a temp Parquet file |
 * | files → PostgreSQL | worker | task-local in-memory DuckDB reads and writes CSV (named pipe), COPY |
 * | files → DuckDB | target file's actor | the target's DuckDB reads the files |
 * | PostgreSQL → files | worker | binary COPY into a task-local DuckDB (spills to disk), COPY … TO file |
 * | DuckDB / files → files | actor / worker | COPY (SELECT …) TO file |
 *
 * A DuckDB database file is only ever touched through `rt.duckdb` (its actor
 * on the main thread); worker threads have no `duckdb` runtime and never get
 * a plan that needs one. Errors are redacted with both connections'
 * passwords before they leave.
 */
import { qualifyDuckdbRelation } from '../targets/duckdb/catalog.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection, DuckDbConnection, PostgresConnection } from '../connections/connection.js';
import { redact } from '../connections/redact.js';
import { EngineError } from '../errors.js';
import { quoteString } from '../targets/literal.js';
import type { Relation } from '../targets/target.js';
import { DuckSession, withMemoryDuckdb } from './duck-session.js';
import { duckFrom, prepareDuckSource } from './duckdb-source.js';
import { duckTableTarget } from './duckdb-target.js';
import type { LoadCount } from './feed.js';
import { copyToFile } from './file-target.js';
import { PgSession } from './pg-session.js';
import { preparePgSource } from './pg-source.js';
import { pgTableTarget } from './pg-target.js';
import type { FileEntry, SourceRead, StreamOutcome, StreamPlan, TargetWrite } from './plan-types.js';
import { loadTable } from './table-load.js';

export interface StreamRuntime {
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
  /**
   * Runs `job` on the connection of a DuckDB database file, one job at a
   * time per file (the file's actor). Absent on worker threads.
   */
  readonly duckdb?: <T>(path: string, job: (conn: DuckDBConnection) => Promise<T>) => Promise<T>;
}

/** True when the stream touches a DuckDB database file, so it must run where the file's actor lives. */
export function needsDuckdbActor(plan: Pick<StreamPlan, 'source' | 'target'>): boolean {
  return plan.source.type === 'duckdb' || plan.target.type === 'duckdb';
}

type Table = Extract<TargetWrite, { kind: 'table' }>;
type FileWrite = Extract<TargetWrite, { kind: 'file' }>;

function relation(write: Table): Relation {
  return { schema: write.schema, name: write.table };
}

function secretsOf(...conns: Connection[]): string[] {
  return conns.flatMap((c) => (c.type === 'postgres' && c.password !== undefined ? [c.password] : []));
}

function duckRunner(rt: StreamRuntime): NonNullable<StreamRuntime['duckdb']> {
  if (rt.duckdb === undefined) throw new EngineError('internal', 'a stream touching a DuckDB file must run on the thread of its actor');
  return rt.duckdb;
}

async function withPg<T>(conn: PostgresConnection, rt: StreamRuntime, work: (s: PgSession) => Promise<T>): Promise<T> {
  const s = await PgSession.open(conn, rt.signal);
  try {
    return await work(s);
  } finally {
    await s.close();
  }
}

async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'service-replication-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The plan's files narrowed to those changed since the last successful run (incremental without keys). */
function filesToRead(plan: StreamPlan): { read: SourceRead; files: readonly FileEntry[] } | null {
  const read = plan.read!;
  if (read.kind !== 'files') return { read, files: [] };
  const after = plan.filesModifiedAfter;
  const files = after === undefined ? read.files : read.files.filter((f) => f.mtimeMs > after);
  if (files.length === 0) return null;
  return { read: { ...read, files }, files };
}

/** Database target: the mode logic of table-load.ts on a PostgreSQL or DuckDB table. */
async function intoTable(plan: StreamPlan, read: SourceRead, rt: StreamRuntime): Promise<LoadCount> {
  const rel = relation(plan.write as Table);
  const { source, target } = plan;
  const log = rt.log;
  if (target.type === 'postgres') {
    return withPg(target, rt, async (t) => {
      if (source.type === 'postgres') return withPg(source, rt, async (s) => loadTable(pgTableTarget(t, log), await preparePgSource(s, plan, 'postgres'), plan, rel, log));
      if (source.type === 'duckdb') {
        return duckRunner(rt)(source.path, async (conn) => {
          const s = new DuckSession(conn, rt.signal);
          return loadTable(pgTableTarget(t, log), await prepareDuckSource(s, plan, duckFrom(read, plan.sourceOptions), 'postgres', log), plan, rel, log);
        });
      }
      return withTempDir((dir) => withMemoryDuckdb(rt.signal, dir, async (s) => loadTable(pgTableTarget(t, log), await prepareDuckSource(s, plan, duckFrom(read, plan.sourceOptions), 'postgres', log), plan, rel, log)));
    });
  }
  const duck = target as DuckDbConnection;
  const duckRel = qualifyDuckdbRelation(rel, duck.path);
  if (source.type === 'duckdb' && source.path !== duck.path) return duckToOtherDuck(plan, read, source, duck, duckRel, rt);
  return duckRunner(rt)(duck.path, async (conn) => {
    const t = new DuckSession(conn, rt.signal);
    const table = duckTableTarget(t, log);
    if (source.type === 'postgres') {
      return withPg(source, rt, async (s) => loadTable(table, await preparePgSource(s, plan, 'duckdb'), plan, duckRel, log));
    }
    return loadTable(table, await prepareDuckSource(t, plan, duckFrom(read, plan.sourceOptions), 'duckdb', log), plan, duckRel, log);
  });
}

/**
 * DuckDB file A → DuckDB file B without holding both actors at once (two
 * actors waiting on each other could deadlock): A exports the selected rows
 * to a temp Parquet file, then B loads it like a file source.
 */
async function duckToOtherDuck(plan: StreamPlan, read: SourceRead, source: DuckDbConnection, target: DuckDbConnection, rel: Relation, rt: StreamRuntime): Promise<LoadCount> {
  const run = duckRunner(rt);
  return withTempDir(async (dir) => {
    const file = join(dir, 'rows.parquet');
    const exported = await run(source.path, async (conn) => {
      const s = new DuckSession(conn, rt.signal);
      const src = await prepareDuckSource(s, plan, duckFrom(read, plan.sourceOptions), 'duckdb', rt.log);
      const feed = src.feed({ columns: src.columns });
      if (feed.kind !== 'duckdb-sql') throw new EngineError('internal', 'expected a DuckDB query');
      return s.run(`COPY (${feed.sql}) TO ${quoteString(file)} (FORMAT parquet)`);
    });
    rt.log(`exported ${exported} rows from ${source.name} to a temp Parquet file`);
    const staged: StreamPlan = { ...plan, select: [], sourceOptions: {} };
    delete (staged as { where?: string }).where;
    const parquet: SourceRead = { kind: 'files', files: [{ path: file, relative: 'rows.parquet', mtimeMs: 0, size: 0 }], format: 'parquet' };
    return run(target.path, async (conn) => {
      const t = new DuckSession(conn, rt.signal);
      return loadTable(duckTableTarget(t, rt.log), await prepareDuckSource(t, staged, duckFrom(parquet, {}), 'duckdb'), staged, rel, rt.log);
    });
  });
}

/** File target: DuckDB writes the rows of the source query. */
async function intoFile(plan: StreamPlan, read: SourceRead, rt: StreamRuntime): Promise<LoadCount> {
  const write = plan.write as FileWrite;
  const { source } = plan;
  const exportQuery = async (s: DuckSession, from: string) => {
    const src = await prepareDuckSource(s, plan, from, 'duckdb', rt.log);
    const feed = src.feed({ columns: src.columns });
    if (feed.kind !== 'duckdb-sql') throw new EngineError('internal', 'expected a DuckDB query');
    return feed.sql;
  };
  if (source.type === 'duckdb') {
    return duckRunner(rt)(source.path, async (conn) => {
      const s = new DuckSession(conn, rt.signal);
      return copyToFile(s, await exportQuery(s, duckFrom(read, plan.sourceOptions)), write, plan.targetOptions, plan.runId, rt.log);
    });
  }
  return withTempDir((dir) =>
    withMemoryDuckdb(rt.signal, dir, async (s) => {
      if (source.type === 'file') return copyToFile(s, await exportQuery(s, duckFrom(read, plan.sourceOptions)), write, plan.targetOptions, plan.runId, rt.log);
      // PostgreSQL: rows land in a task-local table (spilling past memory_limit), then DuckDB writes the file.
      return withPg(source as PostgresConnection, rt, async (pgs) => {
        const src = await preparePgSource(pgs, plan, 'duckdb');
        const rel = { schema: 'main', name: 'rows' };
        const table = duckTableTarget(s, rt.log);
        const exportPlan: StreamPlan = { ...plan, mode: 'full-refresh', targetOptions: {} };
        await loadTable(table, src, exportPlan, rel, rt.log);
        return copyToFile(s, 'SELECT * FROM "main"."rows"', write, plan.targetOptions, plan.runId, rt.log);
      });
    }),
  );
}

/** Runs one planned stream; rejects with an EngineError (`cancelled` when the signal aborted). */
export async function runStream(plan: StreamPlan, rt: StreamRuntime): Promise<StreamOutcome> {
  if (plan.error !== undefined) throw new EngineError('node', plan.error);
  const started = Date.now();
  rt.log(`stream ${plan.streamName}: ${plan.source.name} → ${plan.target.name} ${plan.object ?? ''} (${plan.mode})`);
  try {
    const picked = filesToRead(plan);
    if (picked === null) {
      rt.log(plan.filesModifiedAfter !== undefined ? `no file modified since the last successful run` : `no files to read`);
      if (plan.filesModifiedAfter === undefined) throw new EngineError('node', `no files found for stream "${plan.key}" in connection ${plan.source.name}`);
      return { rows: 0, bytes: 0 };
    }
    // flatten splits the nested objects DuckDB reads (JSON files); a PostgreSQL source's columns load as they are.
    if (plan.sourceOptions.flatten === true && plan.source.type === 'postgres') rt.log('flatten: applies to JSON read by DuckDB; the columns of a PostgreSQL source load as they are (jsonb as JSON)');
    const count = plan.write!.kind === 'file' ? await intoFile(plan, picked.read, rt) : await intoTable(plan, picked.read, rt);
    const fileBytes = picked.files.reduce((a, f) => a + f.size, 0);
    const seconds = (Date.now() - started) / 1000;
    const bytes = Math.max(count.bytes, fileBytes);
    rt.log(`${count.rows} rows, ${bytes} bytes in ${seconds.toFixed(1)} s`);
    const watermark = picked.files.length > 0 ? Math.max(...picked.files.map((f) => f.mtimeMs)) : undefined;
    return { rows: count.rows, bytes, ...(watermark !== undefined ? { filesWatermark: watermark } : {}) };
  } catch (err) {
    if (rt.signal.aborted || (err instanceof EngineError && err.code === 'cancelled')) throw new EngineError('cancelled', 'cancelled');
    const message = redact(err instanceof Error ? err.message : String(err), secretsOf(plan.source, plan.target));
    throw new EngineError(err instanceof EngineError ? err.code : 'node', message);
  }
}
