/**
 * Suite 1, dbt-style projects (generate-dbt-project.ts): `service build
 * compile` of 10,000 models (1,000 in --quick) written as a plain project
 * and as a dbt project (dbt_project.yml, `{{ config() }}`, `{{ ref() }}`),
 * each against the floor (floor/render-floor.mjs, our engine) on the same
 * files; then a dbt project of 1,000 models calling dbt_utils macros, the
 * package copied from the dbt corpus beside the repo (`../shared/dbt-corpus`,
 * or BENCH_DBT_CORPUS) into dbt_packages/, against the plain compile of the
 * same 1,000 models without them. Cold every time (no compile cache).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDbtStyleProject, type Flavour } from '../generate-dbt-project.js';
import { best, int, mb, minMedian, ms, targetOf, type Row } from '../lib/report.js';
import { REPO, runCli, runScript, type TimedRun } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';

const FLOOR = fileURLToPath(new URL('../floor/render-floor.mjs', import.meta.url));
export const DBT_UTILS_TARGET_MS = 2000;
const UTILS_MODELS = 1000;

/** The dbt_utils package of the corpus, or undefined when the corpus is absent. */
export function dbtUtilsPackage(): string | undefined {
  const corpus = process.env.BENCH_DBT_CORPUS ?? join(REPO, '..', 'shared', 'dbt-corpus');
  const dir = join(corpus, 'dbt-utils');
  return existsSync(join(dir, 'macros')) && existsSync(join(dir, 'dbt_project.yml')) ? dir : undefined;
}

async function compileRuns(ctx: SuiteContext, dir: string, flavour: Flavour, reps: number): Promise<TimedRun[]> {
  const env = { ...ctx.cliEnv, BENCH: ctx.db.url, ...(flavour === 'dbt' ? { DBT_PROFILES_DIR: dir } : {}) };
  const runs: TimedRun[] = [];
  for (let i = 0; i < reps; i++) {
    for (const d of ['.service', 'target']) rmSync(join(dir, d), { recursive: true, force: true });
    runs.push(await runCli(['build', 'compile', dir], { env }));
  }
  return runs;
}

const describe = (runs: readonly TimedRun[]) => {
  const b = best(runs, (r) => r.wallMs);
  return `${minMedian(runs.map((r) => r.wallMs))} (CPU ${ms(b.cpuMs)}) · ${mb(b.maxRss)}`;
};

export async function dbtStyleRows(ctx: SuiteContext): Promise<Row[]> {
  const models = ctx.quick ? 1000 : 10_000;
  const reps = ctx.quick ? 1 : 2;
  const rows: Row[] = [];
  for (const flavour of ['plain', 'dbt'] as const) {
    const dir = generateDbtStyleProject(join(ctx.work, `dbt-style-${flavour}-${models}`), models, { flavour });
    ctx.progress(`compile: dbt-style ${flavour} project, ${int(models)} models, floor then ours ×${reps}`);
    const floors: TimedRun[] = [];
    for (let i = 0; i < reps; i++) floors.push(await runScript(FLOOR, [dir, '{}', 'ours'], {}, 'render-floor.mjs'));
    const runs = await compileRuns(ctx, dir, flavour, reps);
    const o = Math.min(...runs.map((r) => r.wallMs));
    const f = Math.min(...floors.map((r) => r.wallMs));
    rows.push({
      id: `compile.dbt-style.${flavour}.${models}`,
      label: `3. compile (cold) ${int(models)} dbt-style models, ${flavour === 'dbt' ? 'dbt project (dbt_project.yml)' : 'plain project (service_build.yml)'}`,
      ours: describe(runs),
      baseline: `floor ${describe(floors)}`,
      ratio: o / f,
      data: { models, flavour, wallMs: runs.map((r) => r.wallMs), cpuMs: runs.map((r) => r.cpuMs), maxRssBytes: runs.map((r) => r.maxRss), floorWallMs: floors.map((r) => r.wallMs), floorMaxRssBytes: floors.map((r) => r.maxRss) },
    });
  }
  try {
    rows.push(await dbtUtilsRow(ctx));
  } catch (err) {
    // Another build under BENCH_CLI (an A/B against an older build) may not load dbt_utils at all:
    // say so in the row and keep the suite's other figures.
    if (process.env.BENCH_CLI === undefined) throw err;
    const why = String((err as Error).message).split('\n').find((l) => l.startsWith('fatal:')) ?? 'failed';
    rows.push({ id: 'compile.dbt-utils', label: `3. compile (cold) a dbt project of ${int(UTILS_MODELS)} models using dbt_utils macros`, ours: `failed under BENCH_CLI: ${why.slice(0, 160)}`, baseline: '', ratio: null, data: { failed: why } });
  }
  return rows;
}

async function dbtUtilsRow(ctx: SuiteContext): Promise<Row> {
  const label = `3. compile (cold) a dbt project of ${int(UTILS_MODELS)} models using dbt_utils macros`;
  const pkg = dbtUtilsPackage();
  if (pkg === undefined) {
    return { id: 'compile.dbt-utils', label, ours: 'skipped: corpus not found', baseline: '', ratio: null, data: { skipped: 'corpus not found' } };
  }
  const reps = ctx.quick ? 1 : 3;
  const plainDir = generateDbtStyleProject(join(ctx.work, `dbt-utils-plain-${UTILS_MODELS}`), UTILS_MODELS, { flavour: 'plain' });
  const utilsDir = generateDbtStyleProject(join(ctx.work, `dbt-utils-${UTILS_MODELS}`), UTILS_MODELS, { flavour: 'dbt', dbtUtils: pkg });
  ctx.progress(`compile: dbt project with dbt_utils, ${int(UTILS_MODELS)} models, the plain compile then ours ×${reps}`);
  const plain: TimedRun[] = [];
  const utils: TimedRun[] = [];
  for (let i = 0; i < reps; i++) {
    plain.push(...(await compileRuns(ctx, plainDir, 'plain', 1)));
    utils.push(...(await compileRuns(ctx, utilsDir, 'dbt', 1)));
  }
  const o = Math.min(...utils.map((r) => r.wallMs));
  const p = Math.min(...plain.map((r) => r.wallMs));
  return {
    id: 'compile.dbt-utils',
    label,
    ours: describe(utils),
    baseline: `plain project, same models without dbt_utils ${describe(plain)}`,
    ratio: o / p,
    target: targetOf(`≤ ${ms(DBT_UTILS_TARGET_MS)}`, o, DBT_UTILS_TARGET_MS, false, (x) => `+${ms(x)} over`),
    data: { models: UTILS_MODELS, package: pkg, wallMs: utils.map((r) => r.wallMs), cpuMs: utils.map((r) => r.cpuMs), maxRssBytes: utils.map((r) => r.maxRss), plainWallMs: plain.map((r) => r.wallMs) },
  };
}
