/**
 * Suite 2 — run overhead. N trivial models (generate-run-projects.ts) run
 * with `service build run` on PostgreSQL (--threads 4, the default) and on
 * DuckDB (one writer). Baseline ("physical limit"): the same driver calls,
 * recorded from our engine, replayed with the same driver, dependency order
 * and concurrency and nothing else, by a plain Node program
 * (floor/replay-floor.mjs) timed like ours, from spawn to exit: it pays what
 * any program doing this work pays (starting Node, loading the driver, cold
 * JIT) and nothing of ours. The same replay inside this already-warm process
 * is kept in the data (`warmReplayMs`, PostgreSQL). Every timed pass starts
 * from empty schemas (PostgreSQL) or a new file (DuckDB); ours and the
 * baseline alternate, and each side reports its best pass.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTrivialProject } from '../generate-run-projects.js';
import { best, int, mb, ms, signed, type Row } from '../lib/report.js';
import { runCli, runPhases, runScript, type RunPhases, type TimedRun } from '../lib/spawn-timed.js';
import { recordRun, replayPostgres, writeRecording } from '../lib/sql-replay.js';
import type { SuiteContext } from '../lib/suite-context.js';

export const RUN_OVERHEAD_TARGET = 1.1;
const THREADS = 4;
const FLOOR = fileURLToPath(new URL('../floor/replay-floor.mjs', import.meta.url));

/** The floor program's wall time, spawn to exit (the same timer as our runs). */
async function replayProgram(recording: string, threads: number, duckFile?: string): Promise<number> {
  return (await runScript(FLOOR, [recording, String(threads), ...(duckFile !== undefined ? [duckFile] : [])], {}, 'replay-floor.mjs')).wallMs;
}

interface Pass {
  readonly run: TimedRun;
  readonly phases: RunPhases;
}

function row(ctx: SuiteContext, target: 'postgres' | 'duckdb', n: number, threads: number, ours: Pass, baselineMs: number, allOurs: number[], allBase: number[], calls: number, warm: number[] = []): Row {
  const r = ours.run.wallMs / baselineMs;
  const perModel = (ours.run.wallMs - baselineMs) / n;
  const execPerModel = (ours.phases.executeMs - baselineMs) / n;
  const isTarget = target === 'postgres';
  return {
    id: `run.${target}`,
    label: `2. run ${int(n)} trivial models, ${target === 'postgres' ? 'PostgreSQL' : 'DuckDB'} (threads ${threads})`,
    ours: `${ms(ours.run.wallMs)} (startup ${ms(ours.phases.startupMs)} + execute ${ms(ours.phases.executeMs)} + exit ${ms(ours.phases.shutdownMs)}) · CPU ${ms(ours.run.cpuMs)} · ${mb(ours.run.maxRss)} · overhead ${signed(perModel)} ms/model`,
    baseline: `replay program ${ms(baselineMs)}${warm.length > 0 ? ` (in a warm process: ${ms(Math.min(...warm))})` : ''}`,
    ratio: r,
    ...(isTarget
      ? {
          target: {
            text: `≤ ${RUN_OVERHEAD_TARGET}× at 1,000`,
            met: ctx.quick ? null : r <= RUN_OVERHEAD_TARGET,
            ...(!ctx.quick && r > RUN_OVERHEAD_TARGET ? { miss: `${(r - RUN_OVERHEAD_TARGET).toFixed(2)}× (${ms(ours.run.wallMs - RUN_OVERHEAD_TARGET * baselineMs)})` } : {}),
          },
        }
      : {}),
    data: {
      models: n,
      threads,
      driverCalls: calls,
      wallMs: ours.run.wallMs,
      cpuMs: ours.run.cpuMs,
      ...ours.phases,
      maxRssBytes: ours.run.maxRss,
      baselineMs,
      overheadMsPerModel: perModel,
      executePhaseOverheadMsPerModel: execPerModel,
      allWallMs: allOurs,
      allBaselineMs: allBase,
      ...(warm.length > 0 ? { warmReplayMs: warm } : {}),
    },
  };
}

export async function runOverhead(ctx: SuiteContext): Promise<Row[]> {
  const n = ctx.quick ? 100 : 1000;
  const reps = ctx.quick ? 1 : 3;
  const project = generateTrivialProject(join(ctx.work, 'trivial'), n, 'BENCH_PG');
  const env = { ...ctx.cliEnv, BENCH_PG: ctx.db.url };
  const rows: Row[] = [];

  // PostgreSQL
  ctx.progress(`run: recording the driver calls of ${n} models on PostgreSQL`);
  await ctx.db.resetSchemas(project.schemas);
  const pgRec = await recordRun(project.dir, 'BENCH_PG', { BENCH_PG: ctx.db.url });
  const pgFile = join(ctx.work, 'run-postgres.recording.json');
  writeRecording(pgRec, pgFile);
  await ctx.db.resetSchemas(project.schemas);
  const pgOurs: Pass[] = [];
  const pgBase: number[] = [];
  const pgWarm: number[] = [];
  for (let i = 0; i < reps; i++) {
    ctx.progress(`run: PostgreSQL pass ${i + 1}/${reps} (baseline, ours, then the replay in this process)`);
    pgBase.push(await replayProgram(pgFile, THREADS));
    await ctx.db.resetSchemas(project.schemas);
    const run = await runCli(['build', 'run', project.dir, '--target', 'BENCH_PG', '--threads', String(THREADS)], { env });
    pgOurs.push({ run, phases: runPhases(run) });
    await ctx.db.resetSchemas(project.schemas);
    pgWarm.push(await replayPostgres(pgRec, THREADS));
    await ctx.db.resetSchemas(project.schemas);
  }
  const pgCalls = pgRec.nodes.reduce((s, x) => s + x.calls.length, pgRec.setup.length);
  rows.push(row(ctx, 'postgres', n, THREADS, best(pgOurs, (p) => p.run.wallMs), Math.min(...pgBase), pgOurs.map((p) => p.run.wallMs), pgBase, pgCalls, pgWarm));
  if (ctx.profileDir) {
    ctx.progress('run: profiling the PostgreSQL run (extra run, not timed)');
    await runCli(['build', 'run', project.dir, '--target', 'BENCH_PG', '--threads', String(THREADS)], { env, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'run-postgres')] });
    await ctx.db.resetSchemas(project.schemas);
  }

  // DuckDB: a new file per pass.
  let fileSeq = 0;
  const newFile = () => join(ctx.work, `run-${++fileSeq}.duckdb`);
  const recFile = newFile();
  ctx.progress(`run: recording the driver calls of ${n} models on DuckDB`);
  const duckRec = await recordRun(project.dir, 'BENCH_DUCK', { BENCH_DUCK: `duckdb://${recFile}` });
  const duckFile = join(ctx.work, 'run-duckdb.recording.json');
  writeRecording(duckRec, duckFile);
  const duckOurs: Pass[] = [];
  const duckBase: number[] = [];
  for (let i = 0; i < reps; i++) {
    ctx.progress(`run: DuckDB pass ${i + 1}/${reps} (baseline, then ours)`);
    duckBase.push(await replayProgram(duckFile, 1, newFile()));
    const file = newFile();
    const run = await runCli(['build', 'run', project.dir, '--target', 'BENCH_DUCK', '--threads', String(THREADS)], { env: { ...env, BENCH_DUCK: `duckdb://${file}` } });
    duckOurs.push({ run, phases: runPhases(run) });
  }
  for (let i = 1; i <= fileSeq; i++) {
    const f = join(ctx.work, `run-${i}.duckdb`);
    rmSync(f, { force: true });
    rmSync(`${f}.wal`, { force: true });
  }
  const duckCalls = duckRec.nodes.reduce((s, x) => s + x.calls.length, duckRec.setup.length);
  rows.push(row(ctx, 'duckdb', n, 1, best(duckOurs, (p) => p.run.wallMs), Math.min(...duckBase), duckOurs.map((p) => p.run.wallMs), duckBase, duckCalls));
  return rows;
}
