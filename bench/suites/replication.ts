/**
 * Suite "replication" — 1,000,000 rows (--quick: 20,000) in two shapes:
 * narrow (int, text, timestamp, numeric) and wide (ten columns: integers,
 * numeric, text with quotes and NULLs, boolean, date, timestamps with and
 * without time zone, jsonb, double), replicated PostgreSQL → DuckDB and
 * DuckDB → PostgreSQL (and PostgreSQL → PostgreSQL, wide) through the code
 * path an execution uses (`runReplicationFile`: the worker pool, the DuckDB
 * file's own thread, COPY, the feed table function), in this process.
 *
 * Baseline, measured in the same run next to each repetition: the two-step
 * native floor a user would script by hand —
 *   - PostgreSQL → DuckDB: `psql -c "\copy (select …) to file (csv)"`, then
 *     DuckDB `COPY t FROM file (csv)` (the @duckdb/node-api in this process,
 *     into a DuckDB file of its own; no DuckDB CLI needed);
 *   - DuckDB → PostgreSQL: DuckDB `COPY t TO file (csv)`, then
 *     `psql -c "\copy t from file (csv)"`;
 * both steps timed together, psql's start-up included (the user's script
 * pays it too). PostgreSQL → PostgreSQL keeps `COPY … FROM STDIN` from a
 * file as its baseline (no target). Target: ≥ 1.0× the floor's rows/s
 * (ours ≤ its time). Every replication and every floor is checked — the
 * rows it reports and a `count(*)` of its target must both be N — so a
 * broken run cannot look fast. A warm-up replication of a one-row table in
 * each direction first starts the pool's workers and the DuckDB file's
 * thread (a daemon keeps both). Three repetitions in full mode; the row
 * shows min · median and judges the median ratio.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { lineRouter } from '../../actors/daemon/line-router.js';
import { runReplicationFile } from '../../actors/daemon/replication-work.js';
import { duckdbActor } from '../../actors/duckdb-actor.js';
import { TaskPool } from '../../actors/pool.js';
import { loadConnections } from '../../engine/connections/index.js';
import { validateJobFile, type ReplicationFile } from '../../engine/jobs/index.js';
import { int, mb, median as middle, minMedian, ms, rate, targetOf, type Row } from '../lib/report.js';
import { runScript } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';

/** Both directions must move rows at ≥ 1.0× the rate of the two-step native floor. */
export const NATIVE_TARGET = 1.0;
const SCHEMA = 'bench_repl';
const TO_DUCK = `source: PG\ntarget: LAKE\nstreams:\n  ${SCHEMA}.src:\n    object: main.bench\n`;
/** The warm-up: starts the pool's workers and the DuckDB file's thread. */
const TO_DUCKDB_TINY = `source: PG\ntarget: LAKE\nstreams:\n  ${SCHEMA}.tiny:\n    object: main.tiny\n`;

/**
 * `schema`.src: `rows` rows of the ten columns above (NULLs, empty strings and quotes
 * included); the API suite replicates the same table while it times /health.
 */
export const sourceTableSql = (schema: string, rows: number): string => `
create table ${schema}.src (id bigint primary key, i integer, n numeric(18,4), t text, b boolean, d date,
  ts timestamp, tstz timestamptz, j jsonb, f double precision);
insert into ${schema}.src
select g, g % 1000, case when g % 7 = 0 then null else g * 1.2345 end,
  case when g % 5 = 0 then null when g % 11 = 0 then '' else 'name "' || g || '", x' end,
  g % 2 = 0, date '2020-01-01' + (g % 3000), timestamp '2020-01-01' + g * interval '1.5 second',
  case when g % 13 = 0 then null else timestamptz '2020-01-01 00:00:00+00' + g * interval '1.000001 second' end,
  case when g % 17 = 0 then null else jsonb_build_object('k', g, 's', 'v' || g) end, g * 0.5
from generate_series(1, ${rows}) g;
analyze ${schema}.src;`;

/** The narrow shape: int, text, timestamp, numeric. */
const narrowTableSql = (schema: string, rows: number): string => `
create table ${schema}.narrow (id integer primary key, t text, ts timestamp, n numeric(18,4));
insert into ${schema}.narrow
select g, case when g % 5 = 0 then null else 'name ' || g end, timestamp '2020-01-01' + g * interval '1.5 second', g * 1.2345
from generate_series(1, ${rows}) g;
analyze ${schema}.narrow;`;

interface Shape {
  readonly name: 'narrow' | 'wide';
  /** The PostgreSQL source table in SCHEMA. */
  readonly table: string;
  readonly columns: number;
  /** The floor's DuckDB table, as a user would declare it. */
  readonly duckDdl: string;
}

const SHAPES: readonly Shape[] = [
  { name: 'narrow', table: 'narrow', columns: 4, duckDdl: 'id INTEGER, t VARCHAR, ts TIMESTAMP, n DECIMAL(18,4)' },
  { name: 'wide', table: 'src', columns: 10, duckDdl: 'id BIGINT, i INTEGER, n DECIMAL(18,4), t VARCHAR, b BOOLEAN, d DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, j JSON, f DOUBLE' },
];

const TABLE_SQL = (rows: number) => `${sourceTableSql(SCHEMA, rows)}
${narrowTableSql(SCHEMA, rows)}
create table ${SCHEMA}.dst (like ${SCHEMA}.src);
create table ${SCHEMA}.tiny as select * from ${SCHEMA}.src limit 1;`;

interface Timed {
  readonly ms: number;
  /** CPU of this whole process (every thread: pool workers, DuckDB's). */
  readonly cpuMs: number;
  readonly peakRss: number;
  /** Minor page faults of this process meanwhile: on a VM where a fault is slow, they are a cost of their own. */
  readonly faults: number;
}

async function timed(work: () => Promise<void>): Promise<Timed> {
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const cpu0 = process.cpuUsage();
  const faults0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  const cpu = process.cpuUsage(cpu0);
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, peakRss: Math.max(peak, process.memoryUsage.rss()), faults: process.resourceUsage().minorPageFault - faults0 };
}

/**
 * Replications through the code path an execution uses (`runReplicationFile`:
 * the worker pool, the DuckDB file's thread) between PG (`url`) and LAKE (the
 * DuckDB file `lake`), with the connections written to `<dir>/env-<lake's name>.yaml`.
 */
export function replicator(url: string, dir: string, lake: string, env: Readonly<Record<string, string>>) {
  const envFile = join(dir, `env-${basename(lake, '.duckdb')}.yaml`);
  writeFileSync(envFile, `connections:\n  PG:\n    url: ${url}\n  LAKE:\n    type: duckdb\n    instance: ${lake}\n`);
  const connections = loadConnections({ projectEnvFile: envFile, env: { ...env }, cwd: dir });
  const pool = new TaskPool({ maxThreads: 2, minThreads: 1, idleTimeout: 60_000 });
  const lines = lineRouter();
  let seq = 0;
  return {
    async replicate(yaml: string, expected: number): Promise<void> {
      const r = await runReplicationFile(replicationFile(yaml), {
        pool, lines, connections, execId: `2benchrepl${String(++seq).padStart(17, '0')}`, start: new Date(), streams: [], mode: null,
        vars: () => undefined, env: () => undefined,
      }, new AbortController().signal, () => {});
      if (r.status !== 'success') throw new Error(`bench replication failed: ${r.failure}`);
      if (r.rows !== expected) throw new Error(`bench replication reported ${r.rows} rows, expected ${expected}`);
    },
    async close(): Promise<void> {
      await pool.destroy();
      lines.close();
      await duckdbActor(lake).close();
    },
  };
}

/** The `--profile` run: `node --cpu-prof … replication.ts <url> <dir> <rows>` replicates PostgreSQL → DuckDB once into a DuckDB file of its own. */
const PROFILED = fileURLToPath(import.meta.url);

async function profiledReplication(url: string, dir: string, rows: number): Promise<void> {
  const { replicate, close } = replicator(url, dir, join(dir, 'profiled.duckdb'), {});
  try {
    await replicate(TO_DUCKDB_TINY, 1);
    await replicate(TO_DUCK, rows);
  } finally {
    await close();
  }
}

if (process.argv[1] === PROFILED) await profiledReplication(process.argv[2]!, process.argv[3]!, Number(process.argv[4]));

function replicationFile(yaml: string): ReplicationFile {
  const v = validateJobFile('bench-replication.yaml', yaml, { fileExists: () => true, connectionKind: () => 'database' }, { as: 'replication' });
  if (v.kind !== 'replication' || v.parsed === undefined) throw new Error(`invalid bench replication: ${JSON.stringify(v.problems)}`);
  return v.parsed;
}

const run = promisify(execFile);

/** `psql <url> -c <command>` as a user's script runs it (no psqlrc, stop on error). */
async function psql(url: string, command: string): Promise<void> {
  await run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url, '-c', command], { maxBuffer: 1 << 20 });
}

/** The two-step native floor (see the header), into and out of a DuckDB file of its own. */
function nativeFloor(url: string, dir: string) {
  const file = join(dir, 'floor.duckdb');
  const csv = join(dir, 'floor.csv');
  let instance: DuckDBInstance | undefined;
  const duck = async () => {
    instance ??= await DuckDBInstance.create(file);
    return instance.connect();
  };
  const duckRows = async (sql: string) => Number((await (await duck()).runAndReadAll(sql)).getRows()[0]![0]);
  return {
    /** PostgreSQL → DuckDB: psql \copy to a CSV file, then DuckDB COPY FROM it into a fresh table; returns the rows DuckDB holds. */
    async toDuck(shape: Shape): Promise<number> {
      await psql(url, `\\copy (select * from ${SCHEMA}.${shape.table}) to '${csv}' with (format csv)`);
      const c = await duck();
      await c.run(`drop table if exists ${shape.name}; create table ${shape.name} (${shape.duckDdl}); copy ${shape.name} from '${csv}' (format csv, header false)`);
      return duckRows(`select count(*) from ${shape.name}`);
    },
    /** DuckDB → PostgreSQL: DuckDB COPY TO a CSV file, then psql \copy from it into an empty table. */
    async toPg(shape: Shape, into: string): Promise<void> {
      const c = await duck();
      await c.run(`copy ${shape.name} to '${csv}' (format csv, header false)`);
      await psql(url, `\\copy ${SCHEMA}.${into} from '${csv}' with (format csv)`);
    },
    close(): void {
      instance?.closeSync();
      rmSync(csv, { force: true });
    },
  };
}

interface Pair {
  readonly ours: Timed;
  readonly floor: Timed;
}

type Repetition = Record<string, Pair>;

export async function replicationSuite(ctx: SuiteContext): Promise<Row[]> {
  const n = ctx.quick ? 20_000 : 1_000_000;
  const repetitions = ctx.quick ? 1 : 3;
  const dir = join(ctx.work, 'replication');
  mkdirSync(dir, { recursive: true });
  const lake = join(dir, 'lake.duckdb');
  const { replicate, close } = replicator(ctx.db.url, dir, lake, ctx.cliEnv);
  const floor = nativeFloor(ctx.db.url, dir);
  const client = new pg.Client({ connectionString: ctx.db.url });
  await client.connect();
  const pgCount = async (table: string) => Number((await client.query(`select count(*)::bigint as c from ${SCHEMA}.${table}`)).rows[0].c);
  const duckCount = async (table: string) => {
    const rows = (await duckdbActor(lake).run((t) => t.run({ type: 'duckdb.sql', path: t.path, sql: `select count(*) from ${table}`, shape: 'rows' }))) as unknown[][];
    return Number(rows[0]![0]);
  };
  const check = async (what: string, count: number | Promise<number>) => {
    const c = await count;
    if (c !== n) throw new Error(`bench replication ${what}: the target holds ${c} rows, expected ${n}`);
  };
  const copyText = join(dir, 'src.copy');
  const runs: Repetition[] = [];
  try {
    ctx.progress(`replication: generating ${int(n)} rows, narrow and wide`);
    await client.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA};${TABLE_SQL(n)}`);
    await pipeline(client.query(copyTo(`COPY ${SCHEMA}.src TO STDOUT`)), createWriteStream(copyText));
    ctx.progress('replication: warm-up (pool workers, the DuckDB file\'s thread)');
    await replicate(TO_DUCKDB_TINY, 1);
    await replicate(`source: LAKE\ntarget: PG\nstreams:\n  main.tiny:\n    object: ${SCHEMA}.tiny_back\n`, 1);
    await replicate(`source: PG\ntarget: PG\nstreams:\n  ${SCHEMA}.tiny:\n    object: ${SCHEMA}.tiny_copy\n`, 1);
    for (let rep = 1; rep <= repetitions; rep++) {
      const r: Repetition = {};
      for (const shape of SHAPES) {
        const duckTable = `main.bench_${shape.name}`;
        ctx.progress(`replication: repetition ${rep}/${repetitions}, ${shape.name} — PostgreSQL → DuckDB: the native floor, then ours`);
        let floorRows = 0;
        const floorIn = await timed(async () => void (floorRows = await floor.toDuck(shape)));
        await check(`native floor into DuckDB (${shape.name})`, floorRows);
        const oursIn = await timed(() => replicate(`source: PG\ntarget: LAKE\nstreams:\n  ${SCHEMA}.${shape.table}:\n    object: ${duckTable}\n`, n));
        await check(`PostgreSQL → DuckDB (${shape.name})`, duckCount(duckTable));
        r[`pg-duckdb.${shape.name}`] = { ours: oursIn, floor: floorIn };
        ctx.progress(`replication: repetition ${rep}/${repetitions}, ${shape.name} — DuckDB → PostgreSQL: the native floor, then ours`);
        const floorTable = `floor_${shape.name}`;
        await client.query(`drop table if exists ${SCHEMA}.${floorTable}; create table ${SCHEMA}.${floorTable} (like ${SCHEMA}.${shape.table})`);
        const floorOut = await timed(() => floor.toPg(shape, floorTable));
        await check(`native floor into PostgreSQL (${shape.name})`, pgCount(floorTable));
        const oursOut = await timed(() => replicate(`source: LAKE\ntarget: PG\nstreams:\n  ${duckTable}:\n    object: ${SCHEMA}.back_${shape.name}\n`, n));
        await check(`DuckDB → PostgreSQL (${shape.name})`, pgCount(`back_${shape.name}`));
        r[`duckdb-pg.${shape.name}`] = { ours: oursOut, floor: floorOut };
      }
      ctx.progress(`replication: repetition ${rep}/${repetitions} — COPY FROM STDIN, PostgreSQL → PostgreSQL (wide)`);
      await client.query(`truncate ${SCHEMA}.dst`);
      const copyIn = await timed(() => pipeline(createReadStream(copyText, { highWaterMark: 1 << 16 }), client.query(copyFrom(`COPY ${SCHEMA}.dst FROM STDIN`))));
      await check('COPY FROM STDIN', pgCount('dst'));
      const pgPg = await timed(() => replicate(`source: PG\ntarget: PG\nstreams:\n  ${SCHEMA}.src:\n    object: ${SCHEMA}.copy\n`, n));
      await check('PostgreSQL → PostgreSQL', pgCount('copy'));
      r['pg-pg.wide'] = { ours: pgPg, floor: copyIn };
      runs.push(r);
    }
  } finally {
    if (ctx.profileDir && runs.length === repetitions) {
      ctx.progress('replication: profiling PostgreSQL → DuckDB in a child process (extra run, not timed)');
      await runScript(PROFILED, [ctx.db.url, dir, String(n)], { env: ctx.cliEnv, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'replication-pg-duckdb'), '--import', 'tsx'] }, 'profiled replication');
    }
    await client.query(`drop schema if exists ${SCHEMA} cascade`).catch(() => {});
    await client.end().catch(() => {});
    floor.close();
    await close();
  }
  const bytes = (await stat(copyText)).size;
  const out: Row[] = [];
  for (const shape of SHAPES) {
    out.push(row(ctx, n, runs, `pg-duckdb.${shape.name}`, `PostgreSQL → DuckDB, ${shape.name} (${shape.columns} columns)`, 'psql \\copy to a file + DuckDB COPY FROM it', true));
    out.push(row(ctx, n, runs, `duckdb-pg.${shape.name}`, `DuckDB → PostgreSQL, ${shape.name} (${shape.columns} columns)`, 'DuckDB COPY TO a file + psql \\copy from it', true));
  }
  out.push(row(ctx, n, runs, 'pg-pg.wide', 'PostgreSQL → PostgreSQL, wide (10 columns)', 'COPY FROM STDIN, from a file', false, { copyTextBytes: bytes }));
  return out;
}

function row(ctx: SuiteContext, n: number, runs: readonly Repetition[], key: string, what: string, baseline: string, isTarget: boolean, extra: Readonly<Record<string, unknown>> = {}): Row {
  const pairs = runs.map((r) => r[key]!);
  const ratios = pairs.map((p) => p.ours.ms / p.floor.ms);
  const ratio = middle(ratios);
  const at = pairs[ratios.indexOf(ratio)]!;
  const o = at.ours;
  return {
    id: `replication.${key}`,
    label: `4. replication ${what}, ${int(n)} rows`,
    ours: `${minMedian(pairs.map((p) => p.ours.ms))} · ${rate((n / o.ms) * 1000, 'rows')} · CPU ${ms(o.cpuMs)} · ${mb(o.peakRss)} · ${int(o.faults)} page faults`,
    baseline: `${baseline} ${minMedian(pairs.map((p) => p.floor.ms))} · ${rate((n / at.floor.ms) * 1000, 'rows')}`,
    ratio,
    ...(isTarget ? { target: targetOf(`≥ ${NATIVE_TARGET.toFixed(1)}× the floor's rows/s`, 1 / ratio, NATIVE_TARGET, ctx.quick, () => `${(1 / ratio).toFixed(2)}× the floor's rows/s, ${ms(o.ms - at.floor.ms)} slower`, true) } : {}),
    data: {
      rows: n,
      ...extra,
      repetitions: pairs.map((p) => ({ oursMs: p.ours.ms, oursCpuMs: p.ours.cpuMs, peakRssBytes: p.ours.peakRss, oursPageFaults: p.ours.faults, baselineMs: p.floor.ms, baselineCpuMs: p.floor.cpuMs, baselinePageFaults: p.floor.faults })),
      ratios,
    },
  };
}
