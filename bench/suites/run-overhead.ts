/**
 * Suite 2 — CPU per model. N trivial models (generate-run-projects.ts) run
 * with `service build run --threads 4` on PostgreSQL and on DuckDB (one
 * writer whatever the threads), with a warm compile cache (one untimed run
 * first). Baseline ("physical limit"): the same driver calls, recorded from
 * our engine, replayed with the same driver, dependency order and
 * concurrency and nothing else, by a plain Node program
 * (floor/replay-floor.mjs), spawned and timed like ours, in the same run,
 * alternating with ours. Three figures per database, each with its target:
 *   - execution phase: ours from the first node's START log line to the
 *     summary line; the replay's from its first node statement to its last
 *     answer (the program reports it) — ≤ 1.05×;
 *   - CPU per model in that phase: ours read from /proc (every thread) when
 *     those two log lines arrive, the replay's from process.cpuUsage() over
 *     its span — ≤ 0.3 ms per model beyond the replay's;
 *   - the whole process, spawn to exit, against the replay program's —
 *     ≤ 1.10×.
 * Each pass starts from empty schemas (PostgreSQL) or a new file (DuckDB);
 * the verdicts compare the best pass of each side, min and median shown.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTrivialProject } from '../generate-run-projects.js';
import { int, mb, minMedian, ms, targetOf, type Row } from '../lib/report.js';
import { runCli, runPhases, runScript, type TimedRun } from '../lib/spawn-timed.js';
import { recordRun, writeRecording, type ReplayTimes } from '../lib/sql-replay.js';
import type { SuiteContext } from '../lib/suite-context.js';

export const EXECUTE_TARGET = 1.05;
export const CPU_PER_MODEL_TARGET_MS = 0.3;
export const WALL_TARGET = 1.1;
const THREADS = 4;
const FLOOR = fileURLToPath(new URL('../floor/replay-floor.mjs', import.meta.url));

/** The floor program: its process wall (spawn to exit, the same timer as ours) and the times it reports. */
async function replayProgram(recording: string, threads: number, duckFile?: string): Promise<ReplayTimes & { readonly processMs: number }> {
  const r = await runScript(FLOOR, [recording, String(threads), ...(duckFile !== undefined ? [duckFile] : [])], {}, 'replay-floor.mjs');
  return { ...(JSON.parse(r.stdout) as ReplayTimes), processMs: r.wallMs };
}

interface Pass {
  readonly run: TimedRun;
  readonly executeMs: number;
  readonly executeCpuMs: number;
}

/** CPU marks of a build run's JSON log: the first node START and the summary line. */
const marks = (line: string): string | undefined => (line.includes(' START"') ? 'start' : line.includes('"msg":"Build Completed in') ? 'end' : undefined);

async function ours(args: readonly string[], env: Readonly<Record<string, string>>): Promise<Pass> {
  const run = await runCli(args, { env, cpuMarks: marks });
  const phases = runPhases(run);
  const { start, end } = run.marks;
  if (!start || !end) throw new Error('build run: no START or summary line seen on stderr (was SERVICE_LOGGING=JSON set?)');
  return { run, executeMs: phases.executeMs, executeCpuMs: end.cpuMs - start.cpuMs };
}

const min = (v: readonly number[]) => Math.min(...v);

function rows(ctx: SuiteContext, db: 'postgres' | 'duckdb', n: number, passes: readonly Pass[], replays: readonly (ReplayTimes & { processMs: number })[], calls: number): Row[] {
  const name = db === 'postgres' ? 'PostgreSQL' : 'DuckDB';
  const what = `${int(n)} trivial models, ${name}, --threads ${THREADS}${db === 'duckdb' ? ' (one writer)' : ''}`;
  const oExec = passes.map((p) => p.executeMs);
  const rExec = replays.map((r) => r.executeMs);
  const oCpu = passes.map((p) => p.executeCpuMs / n);
  const rCpu = replays.map((r) => r.executeCpuMs / n);
  const oWall = passes.map((p) => p.run.wallMs);
  const rWall = replays.map((r) => r.processMs);
  const data = {
    models: n, threads: THREADS, driverCalls: calls,
    oursExecuteMs: oExec, replayExecuteMs: rExec, oursExecuteCpuMsPerModel: oCpu, replayExecuteCpuMsPerModel: rCpu,
    oursWallMs: oWall, replayProcessMs: rWall, replayWallMs: replays.map((r) => r.wallMs),
    oursCpuMs: passes.map((p) => p.run.cpuMs), oursMaxRssBytes: passes.map((p) => p.run.maxRss), oursStartupMs: passes.map((p) => runPhases(p.run).startupMs),
  };
  const execRatio = min(oExec) / min(rExec);
  const cpuOver = min(oCpu) - min(rCpu);
  const wallRatio = min(oWall) / min(rWall);
  const best = passes.reduce((a, b) => (b.run.wallMs < a.run.wallMs ? b : a));
  return [
    {
      id: `run.${db}.execute`,
      label: `1. execution phase (first statement → last answer), ${what}`,
      ours: minMedian(oExec),
      baseline: `replay ${minMedian(rExec)}`,
      ratio: execRatio,
      target: targetOf(`≤ ${EXECUTE_TARGET.toFixed(2)}× replay`, execRatio, EXECUTE_TARGET, ctx.quick, () => `${execRatio.toFixed(2)}×, ${ms(min(oExec) - EXECUTE_TARGET * min(rExec))} over`),
      data,
    },
    {
      id: `run.${db}.cpu`,
      label: `1. CPU per model in the execution phase, ${what}`,
      ours: minMedian(oCpu, (v) => `${v.toFixed(2)} ms`),
      baseline: `replay ${minMedian(rCpu, (v) => `${v.toFixed(2)} ms`)}`,
      ratio: min(oCpu) / min(rCpu),
      target: targetOf(`≤ replay + ${CPU_PER_MODEL_TARGET_MS} ms`, cpuOver, CPU_PER_MODEL_TARGET_MS, ctx.quick, (o) => `+${o.toFixed(2)} ms/model over`),
      data: { models: n },
    },
    {
      id: `run.${db}.wall`,
      label: `1. whole process, spawn → exit (warm compile cache), ${what}`,
      ours: `${minMedian(oWall)} · CPU ${ms(best.run.cpuMs)} · ${mb(best.run.maxRss)}`,
      baseline: `replay program ${minMedian(rWall)}`,
      ratio: wallRatio,
      target: targetOf(`≤ ${WALL_TARGET.toFixed(2)}× replay`, wallRatio, WALL_TARGET, ctx.quick, () => `${wallRatio.toFixed(2)}×, ${ms(min(oWall) - WALL_TARGET * min(rWall))} over`),
      data: { models: n },
    },
  ];
}

export async function runOverhead(ctx: SuiteContext): Promise<Row[]> {
  const n = ctx.quick ? 100 : 1000;
  const reps = ctx.quick ? 1 : 3;
  const project = generateTrivialProject(join(ctx.work, 'trivial'), n, 'BENCH_PG');
  const env = { ...ctx.cliEnv, BENCH_PG: ctx.db.url };
  const out: Row[] = [];
  const pgArgs = ['build', 'run', project.dir, '--target', 'BENCH_PG', '--threads', String(THREADS)];

  // PostgreSQL
  ctx.progress(`run: recording the driver calls of ${n} models on PostgreSQL`);
  await ctx.db.resetSchemas(project.schemas);
  const pgRec = await recordRun(project.dir, 'BENCH_PG', { BENCH_PG: ctx.db.url });
  const pgFile = join(ctx.work, 'run-postgres.recording.json');
  writeRecording(pgRec, pgFile);
  await ctx.db.resetSchemas(project.schemas);
  await runCli(pgArgs, { env }); // warms the compile cache (untimed)
  await ctx.db.resetSchemas(project.schemas);
  const pgOurs: Pass[] = [];
  const pgBase: (ReplayTimes & { processMs: number })[] = [];
  for (let i = 0; i < reps; i++) {
    ctx.progress(`run: PostgreSQL pass ${i + 1}/${reps} (replay program, then ours)`);
    pgBase.push(await replayProgram(pgFile, THREADS));
    await ctx.db.resetSchemas(project.schemas);
    pgOurs.push(await ours(pgArgs, env));
    await ctx.db.resetSchemas(project.schemas);
  }
  const pgCalls = pgRec.nodes.reduce((s, x) => s + x.calls.length, pgRec.setup.length);
  out.push(...rows(ctx, 'postgres', n, pgOurs, pgBase, pgCalls));
  if (ctx.profileDir) {
    ctx.progress('run: profiling the PostgreSQL run (extra run, not timed)');
    await runCli(pgArgs, { env, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'run-postgres')] });
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
  const duckArgs = ['build', 'run', project.dir, '--target', 'BENCH_DUCK', '--threads', String(THREADS)];
  await runCli(duckArgs, { env: { ...env, BENCH_DUCK: `duckdb://${newFile()}` } }); // warms the compile cache (untimed)
  const duckOurs: Pass[] = [];
  const duckBase: (ReplayTimes & { processMs: number })[] = [];
  for (let i = 0; i < reps; i++) {
    ctx.progress(`run: DuckDB pass ${i + 1}/${reps} (replay program, then ours)`);
    duckBase.push(await replayProgram(duckFile, 1, newFile()));
    duckOurs.push(await ours(duckArgs, { ...env, BENCH_DUCK: `duckdb://${newFile()}` }));
  }
  for (let i = 1; i <= fileSeq; i++) {
    const f = join(ctx.work, `run-${i}.duckdb`);
    rmSync(f, { force: true });
    rmSync(`${f}.wal`, { force: true });
  }
  const duckCalls = duckRec.nodes.reduce((s, x) => s + x.calls.length, duckRec.setup.length);
  out.push(...rows(ctx, 'duckdb', n, duckOurs, duckBase, duckCalls));
  if (ctx.profileDir) {
    ctx.progress('run: profiling the DuckDB run (extra run, not timed)');
    await runCli(duckArgs, { env: { ...env, BENCH_DUCK: `duckdb://${join(ctx.work, 'run-profiled.duckdb')}` }, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'run-duckdb')] });
  }
  return out;
}
