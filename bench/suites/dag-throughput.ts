/**
 * Suite 3 — parallel DAG throughput on PostgreSQL. Wide (1 root, N
 * children), deep (a chain of N) and diamond (a root, then stages of
 * parallel models each joined by one model) projects whose models each
 * sleep 20 ms in the database (`pg_sleep(0.02)`), run with --threads 1, 2,
 * 4 and 8.
 *
 * Baseline: the ideal wall time — the makespan of a zero-overhead scheduler
 * with the same slots and FIFO ready queue counting only the sleeps; for
 * wide and deep that is max(critical path, total work / threads). The ratio
 * compares our execution phase (first START to the summary line) with it.
 * Beside it: the replay of our recorded SQL with the same concurrency and no
 * engine (lib/sql-replay.ts), i.e. what the database itself adds to the
 * sleeps (CREATE TABLE AS, the swap, introspection), and our process wall
 * time. The replay is recorded from a twin project with `pg_sleep(0)` (so
 * recording is quick) and replayed with the literal put back to 0.02.
 */
import { join } from 'node:path';
import { idealMakespan } from '../../engine/bench/ideal-schedule.js';
import { generateShapeProject, type Shape } from '../generate-run-projects.js';
import { criticalPathLength } from '../lib/random-dag.js';
import { int, mb, ms, signed, type Row } from '../lib/report.js';
import { runCli, runPhases, TimeoutError } from '../lib/spawn-timed.js';
import { mapRecording, recordRun, replayPostgres } from '../lib/sql-replay.js';
import type { SuiteContext } from '../lib/suite-context.js';

export const SLEEP_SECONDS = 0.02;
export const THREADS = [1, 2, 4, 8] as const;
/**
 * A run slower than 3× the replay (+10 s, at least 20 s; 10 s in --quick) is killed and reported
 * as such: the whole bench must stay bounded even when the engine has a pathological case.
 */
const timeoutFor = (replayMs: number, quick: boolean) => (quick ? 10_000 : Math.max(20_000, 3 * replayMs + 10_000));

const describe = (shape: Shape, models: number, width: number) =>
  shape === 'wide' ? `wide 1+${int(models - 1)}` : shape === 'deep' ? `deep chain of ${int(models)}` : `diamond ${int(models)} (stages of ${width})`;

export async function dagThroughput(ctx: SuiteContext): Promise<Row[]> {
  const n = ctx.quick ? 8 : 500;
  const width = ctx.quick ? 2 : 32;
  const env = { ...ctx.cliEnv, BENCH_PG: ctx.db.url };
  const rows: Row[] = [];
  for (const shape of ['wide', 'deep', 'diamond'] as const) {
    const project = generateShapeProject(join(ctx.work, `shape-${shape}`), shape, n, SLEEP_SECONDS, 'BENCH_PG', width);
    const twin = generateShapeProject(join(ctx.work, `shape-${shape}-rec`), shape, n, 0, 'BENCH_PG', width);
    const models = project.deps.length;
    ctx.progress(`dag: ${shape} (${models} models), recording the SQL`);
    await ctx.db.resetSchemas(project.schemas);
    const rec = mapRecording(await recordRun(twin.dir, 'BENCH_PG', { BENCH_PG: ctx.db.url }), (sql) => sql.replaceAll('pg_sleep(0)', `pg_sleep(${SLEEP_SECONDS})`));
    const critical = criticalPathLength(project.deps) * SLEEP_SECONDS * 1000;
    let chainReplay: number | undefined;
    for (const threads of THREADS) {
      ctx.progress(`dag: ${shape} (${models} models), --threads ${threads}: replay, then ours`);
      await ctx.db.resetSchemas(project.schemas);
      // A chain runs one node at a time whatever the slots: its replay is measured once. Its execution span is what our execution phase compares with.
      const replayMs = shape === 'deep' && chainReplay !== undefined ? chainReplay : (await replayPostgres(rec, threads)).executeMs;
      if (shape === 'deep') chainReplay = replayMs;
      await ctx.db.resetSchemas(project.schemas);
      const ideal = idealMakespan(project.deps, project.deps.map(() => SLEEP_SECONDS * 1000), threads);
      const base = { shape, models, threads, sleepMs: SLEEP_SECONDS * 1000, idealMs: ideal, replayMs, criticalPathMs: critical, workMs: models * SLEEP_SECONDS * 1000 };
      const label = `DAG throughput: ${describe(shape, models, width)}, threads ${threads}`;
      const baseline = `ideal ${ms(ideal)} · replay ${ms(replayMs)}`;
      const timeoutMs = timeoutFor(replayMs, ctx.quick);
      try {
        const run = await runCli(['build', 'run', project.dir, '--threads', String(threads)], { env, timeoutMs });
        const phases = runPhases(run);
        rows.push({
          id: `dag.${shape}.t${threads}`,
          label,
          ours: `execute ${ms(phases.executeMs)} · wall ${ms(run.wallMs)} · ${mb(run.maxRss)} · ${signed((phases.executeMs - replayMs) / models)} ms/model vs replay`,
          baseline,
          ratio: phases.executeMs / ideal,
          data: { ...base, wallMs: run.wallMs, cpuMs: run.cpuMs, maxRssBytes: run.maxRss, ...phases },
        });
      } catch (err) {
        if (!(err instanceof TimeoutError)) throw err;
        rows.push({ id: `dag.${shape}.t${threads}`, label, ours: `killed after ${ms(timeoutMs)}`, baseline, ratio: timeoutMs / ideal, data: { ...base, killedAfterMs: timeoutMs } });
      }
    }
    await ctx.db.resetSchemas(project.schemas);
  }
  return rows;
}
