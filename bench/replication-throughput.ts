/**
 * Replication throughput: PostgreSQL → DuckDB and DuckDB →
 * PostgreSQL for one table of 1,000,000 rows (ten columns: integers,
 * numeric, text with quotes and NULLs, boolean, date, timestamps with and
 * without time zone, jsonb, double), through the same code path an execution
 * uses (runReplicationFile: worker pool, DuckDB actor, COPY, appender).
 *
 * Baselines, measured in the same run against the same databases:
 *   - COPY src TO STDOUT read to the end and discarded (the floor for reading
 *     PostgreSQL);
 *   - COPY dst FROM STDIN fed from a file holding the same rows as COPY text
 *     (the floor for writing PostgreSQL).
 * Peak RSS is sampled every 20 ms during each phase.
 *
 *   node --import tsx bench/replication-throughput.ts [--rows 1000000] [--json]
 *
 * PostgreSQL: SERVICE_BENCH_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres);
 * a temp database is created and dropped.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { lineRouter } from '../actors/daemon/line-router.js';
import { runReplicationFile } from '../actors/daemon/replication-work.js';
import { closeAllDuckDbActors } from '../actors/duckdb-actor.js';
import { TaskPool } from '../actors/pool.js';
import { loadConnections } from '../engine/connections/index.js';
import { validateJobFile, type ReplicationFile } from '../engine/jobs/index.js';
import { closeAllDuckdbInstances } from '../engine/targets/index.js';

const args = process.argv.slice(2);
const ROWS = Number(args[args.indexOf('--rows') + 1] ?? NaN) || 1_000_000;
const JSON_OUT = args.includes('--json');
const ADMIN = process.env.SERVICE_BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

interface Phase {
  readonly name: string;
  readonly rows: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly peakRssMb: number;
}

async function measure(name: string, work: () => Promise<number>): Promise<Phase> {
  if (global.gc) global.gc();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  const rows = await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { name, rows, seconds, rowsPerSecond: Math.round(rows / seconds), peakRssMb: Math.round(peak / 1e6) };
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function replication(yaml: string): ReplicationFile {
  const v = validateJobFile('bench.yaml', yaml, { fileExists: () => true, connectionKind: () => 'database' }, { as: 'replication' });
  if (v.kind !== 'replication' || v.parsed === undefined) throw new Error(JSON.stringify(v.problems));
  return v.parsed;
}

const TABLE_SQL = (rows: number) => `
create table public.bench_src (id bigint primary key, i integer, n numeric(18,4), t text, b boolean, d date,
  ts timestamp, tstz timestamptz, j jsonb, f double precision);
insert into public.bench_src
select g, g % 1000, case when g % 7 = 0 then null else g * 1.2345 end,
  case when g % 5 = 0 then null when g % 11 = 0 then '' else 'name "' || g || '", x' end,
  g % 2 = 0, date '2020-01-01' + (g % 3000), timestamp '2020-01-01' + g * interval '1.5 second',
  case when g % 13 = 0 then null else timestamptz '2020-01-01 00:00:00+00' + g * interval '1.000001 second' end,
  case when g % 17 = 0 then null else jsonb_build_object('k', g, 's', 'v' || g) end, g * 0.5
from generate_series(1, ${rows}) g;
analyze public.bench_src;`;

async function main(): Promise<void> {
  const dbName = `bench_repl_${randomBytes(4).toString('hex')}`;
  const url = new URL(ADMIN);
  url.pathname = `/${dbName}`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'service-bench-repl-'));
  await admin(`create database "${dbName}"`);
  const pool = new TaskPool({ maxThreads: 2, minThreads: 1, idleTimeout: 60_000 });
  const lines = lineRouter();
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    await client.connect();
    process.stderr.write(`generating ${ROWS} rows…\n`);
    await client.query(TABLE_SQL(ROWS));
    await client.query('create table public.bench_dst (like public.bench_src)');
    await writeFile(path.join(dir, 'env.yaml'), `connections:\n  PG:\n    url: ${url}\n  LAKE:\n    type: duckdb\n    instance: ${path.join(dir, 'lake.duckdb')}\n`);
    const connections = loadConnections({ projectEnvFile: path.join(dir, 'env.yaml'), env: { SERVICE_HOME_DIR: path.join(dir, 'home') }, cwd: dir });
    let seq = 0;
    const replicate = async (yaml: string) => {
      const r = await runReplicationFile(replication(yaml), {
        pool, lines, connections, execId: `2benchexec${String(++seq).padStart(17, '0')}`, start: new Date(), streams: [], mode: null,
        vars: () => undefined, env: () => undefined,
      }, new AbortController().signal, () => {});
      if (r.status !== 'success') throw new Error(`replication failed: ${r.failure}`);
      return r.rows;
    };

    const copyText = path.join(dir, 'bench_src.copy');
    const phases: Phase[] = [];
    phases.push(await measure('COPY bench_src TO STDOUT (discarded)', async () => {
      await pipeline(client.query(copyTo('COPY public.bench_src TO STDOUT')), new Writable({ write(_chunk: Buffer, _e, done) { done(); } }));
      return ROWS;
    }));
    await pipeline(client.query(copyTo('COPY public.bench_src TO STDOUT')), createWriteStream(copyText));
    phases.push(await measure('replication PostgreSQL → DuckDB', () => replicate('source: PG\ntarget: LAKE\nstreams:\n  public.bench_src:\n    object: main.bench\n')));
    phases.push(await measure('COPY bench_dst FROM STDIN (from a file)', async () => {
      await client.query('truncate public.bench_dst');
      const s = client.query(copyFrom('COPY public.bench_dst FROM STDIN'));
      await pipeline(createReadStream(copyText, { highWaterMark: 1 << 16 }), s);
      return s.rowCount;
    }));
    phases.push(await measure('replication DuckDB → PostgreSQL', () => replicate('source: LAKE\ntarget: PG\nstreams:\n  main.bench:\n    object: public.bench_back\n')));
    phases.push(await measure('replication PostgreSQL → PostgreSQL', () => replicate('source: PG\ntarget: PG\nstreams:\n  public.bench_src:\n    object: public.bench_pg\n')));

    const check = await client.query('select (select count(*) from public.bench_back)::int as back, (select count(*) from public.bench_pg)::int as pg');
    const copyBytes = (await stat(copyText)).size;
    const ratio = (a: string, b: string) => {
      const x = phases.find((p) => p.name.startsWith(a))!;
      const y = phases.find((p) => p.name.startsWith(b))!;
      return Number((x.rowsPerSecond / y.rowsPerSecond).toFixed(2));
    };
    const result = {
      rows: ROWS,
      copyTextBytes: copyBytes,
      node: process.version,
      cpus: os.cpus().length,
      phases,
      ratios: {
        pgToDuckdbVsCopyOut: ratio('replication PostgreSQL → DuckDB', 'COPY bench_src TO'),
        duckdbToPgVsCopyIn: ratio('replication DuckDB → PostgreSQL', 'COPY bench_dst FROM'),
        pgToPgVsCopyIn: ratio('replication PostgreSQL → PostgreSQL', 'COPY bench_dst FROM'),
      },
      verified: { duckdbToPgRows: check.rows[0].back, pgToPgRows: check.rows[0].pg },
    };
    if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else {
      process.stdout.write(`replication throughput, ${ROWS.toLocaleString('en')} rows (${(copyBytes / 1e6).toFixed(0)} MB as COPY text), ${result.cpus} CPUs\n\n`);
      process.stdout.write(`${'phase'.padEnd(44)}${'seconds'.padStart(9)}${'rows/s'.padStart(12)}${'peak RSS MB'.padStart(13)}\n`);
      for (const p of phases) process.stdout.write(`${p.name.padEnd(44)}${p.seconds.toFixed(2).padStart(9)}${p.rowsPerSecond.toLocaleString('en').padStart(12)}${String(p.peakRssMb).padStart(13)}\n`);
      process.stdout.write(`\nPG → DuckDB / COPY TO STDOUT: ${result.ratios.pgToDuckdbVsCopyOut}×   DuckDB → PG / COPY FROM STDIN: ${result.ratios.duckdbToPgVsCopyIn}×   PG → PG / COPY FROM STDIN: ${result.ratios.pgToPgVsCopyIn}×\n`);
    }
  } finally {
    await client.end().catch(() => {});
    await pool.destroy();
    lines.close();
    await closeAllDuckDbActors();
    await closeAllDuckdbInstances();
    await admin(`drop database if exists "${dbName}" with (force)`);
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
