/**
 * Suite 1 — compile throughput. Generated projects of 1,000 and 10,000
 * models (500 and 1,000 in --quick; generate-project.ts); `service build
 * list` and `service build compile` spawned as a user runs them, timed from
 * spawn to exit, peak RSS and CPU from /usr/bin/time:
 * - `list` and `compile (cold)`: no compile cache (its folder removed before each run);
 * - `compile (warm)`: the unchanged project again, from `<dir>/.service/compile-cache`;
 * - `one changed file`: in this process, the daemon's path (prepareBuild with
 *   the in-memory cache and the build directory's change journal, compiled
 *   twice before), one model file edited, then — once the journal's watcher
 *   has reported the edit, as it would to a running daemon — compiled again;
 *   the best of 3 edits. The same without a journal (every file stat'ed) is
 *   shown beside it.
 * Baseline (the floor for our work): a plain script that reads the same
 * files and renders each template once with the template engine we ship,
 * the macro files compiled once (floor/render-floor.mjs), spawned the same
 * way; the same loop on stock nunjucks is shown beside it. Targets at
 * 10,000 models: cold ≤ 1.0× the floor's wall, peak RSS ≤ 1.3× the
 * floor's, warm ≤ 0.3 s. Then dbt-style projects (dbt-projects.ts).
 */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareBuild } from '../../engine/build-plan/prepare.js';
import { changeJournal, type ChangeJournal } from '../../engine/files/change-journal.js';
import { folderOf, generateProject, modelName } from '../generate-project.js';
import { best, int, mb, minMedian, ms, rate, targetOf, type Row } from '../lib/report.js';
import { runCli, runScript, type TimedRun } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';
import { dbtStyleRows } from './dbt-projects.js';

const FLOOR = fileURLToPath(new URL('../floor/render-floor.mjs', import.meta.url));
/** Cold compile ÷ the floor's wall, and peak RSS ÷ the floor's, at 10,000 models. */
export const COLD_TARGET = 1.0;
export const RSS_TARGET = 1.3;
export const WARM_TARGET_MS = 300;
export const CHANGED_TARGET_MS = 50;
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
    ctx.progress(`compile: ${int(models)} models, floor ×${reps} (our engine), stock nunjucks ×1`);
    const floorRuns = await repeat(reps, () => runScript(FLOOR, [dir, JSON.stringify({ limit_n: 100 }), 'ours'], { env }, 'render-floor.mjs'));
    const floor = best(floorRuns, (r) => r.wallMs);
    const floorLoop = (JSON.parse(floor.stdout) as { loopMs: number }).loopMs;
    const stock = await runScript(FLOOR, [dir, JSON.stringify({ limit_n: 100 }), 'stock'], { env }, 'render-floor.mjs');
    const floorText = `floor ${minMedian(floorRuns.map((r) => r.wallMs))} · ${mb(floor.maxRss)} (stock nunjucks ${ms(stock.wallMs)} · ${mb(stock.maxRss)})`;
    const cacheDir = join(dir, '.service');
    for (const variant of ['list', 'compile', 'warm'] as const) {
      const command = variant === 'list' ? 'list' : 'compile';
      ctx.progress(`compile: ${int(models)} models, build ${command}${variant === 'warm' ? ' (warm)' : ''} ×${reps}`);
      if (variant === 'warm') await runCli(['build', 'compile', dir], { env }); // fills the cache (not timed)
      const runs = await repeat(reps, () => {
        if (variant !== 'warm') rmSync(cacheDir, { recursive: true, force: true });
        return runCli(['build', command, dir], { env });
      });
      const ours = best(runs, (r) => r.wallMs);
      const isTarget = variant !== 'list' && models === TARGET_MODELS;
      const r = ours.wallMs / floor.wallMs;
      const target =
        variant === 'warm'
          ? targetOf(`≤ ${ms(WARM_TARGET_MS)}`, ours.wallMs, WARM_TARGET_MS, false, (o) => `+${ms(o)} over`)
          : targetOf(`≤ ${COLD_TARGET.toFixed(2)}× floor`, r, COLD_TARGET, false, () => `${r.toFixed(2)}×, ${ms(ours.wallMs - floor.wallMs)} over`);
      const data = {
        models,
        wallMs: ours.wallMs,
        cpuMs: ours.cpuMs,
        allWallMs: runs.map((x) => x.wallMs),
        maxRssBytes: ours.maxRss,
        modelsPerSecond: (models * 1000) / ours.wallMs,
        floorWallMs: floor.wallMs,
        floorAllWallMs: floorRuns.map((x) => x.wallMs),
        floorLoopMs: floorLoop,
        floorMaxRssBytes: floor.maxRss,
        stockNunjucksFloorWallMs: stock.wallMs,
        stockNunjucksFloorMaxRssBytes: stock.maxRss,
        stdoutBytes: ours.stdout.length,
      };
      rows.push({
        id: variant === 'warm' ? `compile.${models}.warm` : `compile.${models}.${command}`,
        label: `3. ${variant === 'warm' ? 'compile (warm cache)' : variant === 'compile' ? 'compile (cold)' : 'list'} ${int(models)} models`,
        ours: `${minMedian(runs.map((x) => x.wallMs))} (CPU ${ms(ours.cpuMs)}) · ${rate((models * 1000) / ours.wallMs, 'models')} · ${mb(ours.maxRss)}`,
        baseline: floorText,
        ratio: r,
        ...(isTarget ? { target } : {}),
        data,
      });
      if (variant === 'compile' && models === TARGET_MODELS) {
        const rss = ours.maxRss / floor.maxRss;
        rows.push({
          id: `compile.${models}.rss`,
          label: `3. compile (cold) ${int(models)} models, peak RSS`,
          ours: `${mb(ours.maxRss)} (${runs.map((x) => mb(x.maxRss)).join(', ')})`,
          baseline: `floor ${mb(floor.maxRss)}`,
          ratio: rss,
          target: targetOf(`≤ ${RSS_TARGET.toFixed(2)}× floor`, rss, RSS_TARGET, false, () => `${rss.toFixed(2)}×, ${mb(ours.maxRss - RSS_TARGET * floor.maxRss)} over`),
          data: { models, maxRssBytes: runs.map((x) => x.maxRss), floorMaxRssBytes: floorRuns.map((x) => x.maxRss) },
        });
      }
    }
    rows.push(await changedFileRow(dir, models, floor.wallMs, ctx));
    if (ctx.profileDir && models === sizes[sizes.length - 1]) {
      // Both targeted variants: cold (no cache: it renders, on worker threads too) and warm (the cache the cold run wrote, nothing changed).
      ctx.progress('compile: profiling build compile, cold then warm (extra runs, not timed)');
      rmSync(cacheDir, { recursive: true, force: true });
      for (const variant of ['cold', 'warm']) {
        await runCli(['build', 'compile', dir], { env, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, `compile-${models}-${variant}`)] });
      }
    }
  }
  rows.push(...(await dbtStyleRows(ctx)));
  return rows;
}

interface ChangedTime {
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** The daemon's recompile after one edit: prepareBuild in this process with the in-memory cache, with and without the change journal. */
async function changedFileRow(dir: string, models: number, floorWallMs: number, ctx: SuiteContext): Promise<Row> {
  ctx.progress(`compile: ${int(models)} models, one changed file in a running process ×3`);
  const saved = process.env.BENCH;
  process.env.BENCH = ctx.db.url;
  const logger = { log: () => {}, enabled: () => false };
  const journal = changeJournal(resolve(dir));
  if (journal === undefined) throw new Error(`cannot watch ${dir}`);
  const compile = (changes?: ChangeJournal) => prepareBuild({ verb: 'compile', path: dir, select: [], exclude: [], compileCache: 'memory', ...(changes ? { changes } : {}) }, logger);
  /** Until the journal's watcher has reported `rel` (bounded: a daemon learns of an edit within milliseconds). */
  const reported = async (mark: number, rel: string) => {
    for (let i = 0; i < 400 && !(journal.since(mark) ?? [rel]).includes(rel); i++) await new Promise((r) => setTimeout(r, 5));
  };
  const edits = async (changes: ChangeJournal | undefined): Promise<ChangedTime[]> => {
    const times: ChangedTime[] = [];
    compile(changes);
    compile(changes);
    for (const i of [1, Math.floor(models / 2), models - 1]) {
      const rel = `${folderOf(i)}/${modelName(i, models)}.sql`;
      const file = join(dir, rel);
      const before = readFileSync(file, 'utf8');
      let mark = journal.mark();
      appendFileSync(file, `-- edited ${i}\n`);
      await reported(mark, rel);
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      compile(changes);
      const wallMs = performance.now() - t0;
      const used = process.cpuUsage(cpu);
      times.push({ wallMs, cpuMs: (used.user + used.system) / 1000 });
      mark = journal.mark();
      writeFileSync(file, before);
      await reported(mark, rel);
      compile(changes);
    }
    return times;
  };
  let daemon: ChangedTime[];
  let plain: ChangedTime[];
  try {
    daemon = await edits(journal);
    plain = await edits(undefined);
  } finally {
    if (saved === undefined) delete process.env.BENCH;
    else process.env.BENCH = saved;
  }
  const ours = best(daemon, (r) => r.wallMs);
  const stat = best(plain, (r) => r.wallMs);
  const isTarget = models === TARGET_MODELS;
  return {
    id: `compile.${models}.changed`,
    label: `3. one changed file, running process ${int(models)} models`,
    ours: `${ms(ours.wallMs)} (CPU ${ms(ours.cpuMs)}) · without a change journal ${ms(stat.wallMs)}`,
    baseline: `floor ${ms(floorWallMs)} (whole project)`,
    ratio: ours.wallMs / floorWallMs,
    ...(isTarget
      ? {
          target: {
            text: `≤ ${ms(CHANGED_TARGET_MS)}`,
            met: ours.wallMs <= CHANGED_TARGET_MS,
            ...(ours.wallMs > CHANGED_TARGET_MS ? { miss: `+${ms(ours.wallMs - CHANGED_TARGET_MS)} (${(((ours.wallMs - CHANGED_TARGET_MS) / CHANGED_TARGET_MS) * 100).toFixed(0)}%) over` } : {}),
          },
        }
      : {}),
    data: { models, wallMs: ours.wallMs, cpuMs: ours.cpuMs, all: daemon, withoutJournal: plain, floorWallMs },
  };
}
