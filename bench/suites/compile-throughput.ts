/**
 * Suite 1 — compile throughput. Generated projects of 1,000 and 10,000
 * models (500 and 1,000 in --quick; generate-project.ts); `service build
 * list` and `service build compile` spawned as a user runs them, timed from
 * spawn to exit, peak RSS and CPU from /usr/bin/time. Baseline (the floor
 * for our work): a plain script that reads the same files and renders each
 * template once with stock nunjucks (floor/render-floor.mjs), spawned the
 * same way.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateProject } from '../generate-project.js';
import { best, int, mb, ms, rate, type Row } from '../lib/report.js';
import { runCli, runScript, type TimedRun } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';

const FLOOR = fileURLToPath(new URL('../floor/render-floor.mjs', import.meta.url));
export const COMPILE_TARGET_MS = 5000;
const TARGET_MODELS = 10_000;

async function repeat(times: number, fn: () => Promise<TimedRun>): Promise<TimedRun[]> {
  const runs: TimedRun[] = [];
  for (let i = 0; i < times; i++) runs.push(await fn());
  return runs;
}

export async function compileThroughput(ctx: SuiteContext): Promise<Row[]> {
  const rows: Row[] = [];
  const sizes = ctx.quick ? [500, 1_000] : [1_000, TARGET_MODELS];
  for (const models of sizes) {
    const dir = join(ctx.work, `compile-${models}`);
    ctx.progress(`compile: generating ${int(models)} models`);
    generateProject(dir, models);
    const env = { ...ctx.cliEnv, BENCH: ctx.db.url };
    const reps = ctx.quick ? 1 : models >= 10_000 ? 2 : 3;
    ctx.progress(`compile: ${int(models)} models, floor ×${reps}`);
    const floorRuns = await repeat(reps, () => runScript(FLOOR, [dir, JSON.stringify({ limit_n: 100 })], { env }, 'render-floor.mjs'));
    const floor = best(floorRuns, (r) => r.wallMs);
    const floorLoop = (JSON.parse(floor.stdout) as { loopMs: number }).loopMs;
    for (const command of ['list', 'compile'] as const) {
      ctx.progress(`compile: ${int(models)} models, build ${command} ×${reps}`);
      const runs = await repeat(reps, () => runCli(['build', command, dir], { env }));
      const ours = best(runs, (r) => r.wallMs);
      const isTarget = command === 'compile' && models === TARGET_MODELS;
      rows.push({
        id: `compile.${models}.${command}`,
        label: `1. ${command} ${int(models)} models`,
        ours: `${ms(ours.wallMs)} · ${rate((models * 1000) / ours.wallMs, 'models')} · ${mb(ours.maxRss)}`,
        baseline: `floor ${ms(floor.wallMs)} · ${mb(floor.maxRss)}`,
        ratio: ours.wallMs / floor.wallMs,
        ...(isTarget
          ? {
              target: {
                text: '≤ 5 s',
                met: ours.wallMs <= COMPILE_TARGET_MS,
                ...(ours.wallMs > COMPILE_TARGET_MS ? { miss: `+${ms(ours.wallMs - COMPILE_TARGET_MS)} (${(((ours.wallMs - COMPILE_TARGET_MS) / COMPILE_TARGET_MS) * 100).toFixed(0)}%)` } : {}),
              },
            }
          : {}),
        data: {
          models,
          wallMs: ours.wallMs,
          cpuMs: ours.cpuMs,
          allWallMs: runs.map((r) => r.wallMs),
          maxRssBytes: ours.maxRss,
          modelsPerSecond: (models * 1000) / ours.wallMs,
          floorWallMs: floor.wallMs,
          floorLoopMs: floorLoop,
          floorMaxRssBytes: floor.maxRss,
          stdoutBytes: ours.stdout.length,
        },
      });
    }
    if (ctx.profileDir && models === sizes[sizes.length - 1]) {
      ctx.progress('compile: profiling build compile (extra run, not timed)');
      await runCli(['build', 'compile', dir], { env, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, `compile-${models}`)] });
    }
  }
  return rows;
}
