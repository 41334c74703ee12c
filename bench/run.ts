/**
 * `npm run bench [-- --quick] [-- --profile] [-- --only=compile,run,efficiency,dag,api,ui,micro,replication] [-- --keep]`
 *
 * Generates its inputs, runs every benchmark suite, prints one Markdown table
 * (ours | baseline measured in the same run | ratio | target | verdict |
 * load) and writes bench/results.json and bench/results.md (the table
 * docs/performance.md carries); --quick and --only runs write
 * bench/out/results-partial.{json,md} instead. A fresh PostgreSQL database `bench_<random>` is created
 * for the run and dropped at the end; projects and DuckDB files live in a
 * temp directory that is removed too. Nothing here asserts on timing and
 * nothing here runs in CI.
 *
 *   --quick    smaller inputs, one repetition (a few minutes on 2 cores)
 *   --profile  extra `node --cpu-prof` runs (not timed) of `compile` on the
 *              largest project, of the PostgreSQL run, of the daemon under
 *              the API load and during the replication, and of a
 *              PostgreSQL → DuckDB replication (one profile per thread), kept
 *              under bench/out/profiles/; prints where the time goes
 *   --only=…   a subset of suites: compile, run, efficiency, dag, api, ui, micro, cluster, replication
 *   --keep     keep the temp directory (generated projects)
 *
 * BENCH_CLI=/path/to/bin/service.js times another build of the CLI (an A/B
 * of a candidate fix); SERVICE_BENCH_PG_URL names the PostgreSQL server.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, type BenchDatabase } from './lib/bench-database.js';
import { formatSummary, profileFiles, summarize } from './lib/cpu-profile.js';
import { ensureBuild } from './lib/ensure-build.js';
import { loadNow, machineInfo, pageFaultCostUs } from './lib/machine.js';
import { markdownTable, verdict, type Row } from './lib/report.js';
import { footer, resultsMarkdown, tally, type Results } from './lib/results-md.js';
import type { SuiteContext } from './lib/suite-context.js';
import { apiThroughput } from './suites/api.js';
import { clusterSuite } from './suites/cluster.js';
import { compileThroughput } from './suites/compile-throughput.js';
import { dagEfficiency } from './suites/dag-efficiency.js';
import { dagThroughput } from './suites/dag-throughput.js';
import { micro } from './suites/micro.js';
import { replicationSuite } from './suites/replication.js';
import { runOverhead } from './suites/run-overhead.js';
import { uiRender } from './suites/ui.js';

const SUITES = ['compile', 'run', 'efficiency', 'dag', 'api', 'ui', 'micro', 'cluster', 'replication'] as const;
type Suite = (typeof SUITES)[number];

interface Options {
  readonly quick: boolean;
  readonly profile: boolean;
  readonly keep: boolean;
  readonly only: ReadonlySet<Suite>;
}

function parseArgs(argv: readonly string[]): Options {
  let quick = false;
  let profile = false;
  let keep = false;
  let only = new Set<Suite>(SUITES);
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg === '--profile') profile = true;
    else if (arg === '--keep') keep = true;
    else if (arg.startsWith('--only=')) {
      const names = arg.slice('--only='.length).split(',');
      const unknown = names.filter((n) => !(SUITES as readonly string[]).includes(n));
      if (unknown.length > 0) throw new Error(`--only: unknown suite '${unknown.join(',')}'; expected some of ${SUITES.join(', ')}`);
      only = new Set(names as Suite[]);
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`usage: npm run bench [-- --quick] [-- --profile] [-- --only=${SUITES.join(',')}] [-- --keep]\n`);
      process.exit(0);
    } else throw new Error(`unknown flag '${arg}'; see npm run bench -- --help`);
  }
  return { quick, profile, keep, only };
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const progress = (m: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s] ${m}\n`);
  const rebuilt = ensureBuild(progress);
  const machine = machineInfo();
  if (machine.loadAverageAtStart > machine.cores / 2) {
    progress(`warning: load average ${machine.loadAverageAtStart.toFixed(1)} on ${machine.cores} cores — other work will skew the figures`);
  }
  const work = mkdtempSync(join(tmpdir(), 'service-bench-'));
  const home = join(work, 'home'); // empty SERVICE_HOME_DIR: no host connections leak in
  mkdirSync(home);
  const profileDir = opts.profile ? join(fileURLToPath(new URL('.', import.meta.url)), 'out', 'profiles', new Date().toISOString().replace(/[:.]/g, '-')) : undefined;
  let db: BenchDatabase | undefined;
  const cleanup = async () => {
    await db?.drop().catch((err: unknown) => process.stderr.write(`warning: could not drop ${db?.name}: ${(err as Error).message}\n`));
    if (!opts.keep) rmSync(work, { recursive: true, force: true });
  };
  const onSignal = () => {
    progress('interrupted: dropping the bench database');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const rows: Row[] = [];
  try {
    db = await createBenchDatabase();
    progress(`database ${db.name} (PostgreSQL ${db.serverVersion}); work dir ${work}`);
    const ctx: SuiteContext = { quick: opts.quick, work, db, cliEnv: { SERVICE_HOME_DIR: home, SERVICE_LOGGING: 'JSON' }, ...(profileDir ? { profileDir } : {}), progress };
    const suites: readonly [Suite, (c: SuiteContext) => Promise<Row[]>][] = [
      // The five figures of docs/performance.md first, in its order; then the rows kept for context.
      ['run', runOverhead],
      ['efficiency', dagEfficiency],
      ['compile', compileThroughput],
      ['replication', replicationSuite],
      ['api', apiThroughput],
      ['dag', dagThroughput],
      ['ui', uiRender],
      ['micro', micro],
      ['cluster', clusterSuite],
    ];
    for (const [name, suite] of suites) {
      if (!opts.only.has(name)) continue;
      const loadBefore = loadNow();
      const produced = await suite(ctx);
      const loadAfter = loadNow();
      for (const r of produced) r.load ??= [loadBefore, loadAfter];
      rows.push(...produced);
    }
  } finally {
    await cleanup();
  }

  const seconds = (performance.now() - started) / 1000;
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const faults = pageFaultCostUs();
  const loadEnd = loadNow();
  const machineRecord = { ...machine, loadAverageAtEnd: loadEnd, minorPageFaultUs: faults.usPerFault, postgres: db!.serverVersion };
  const summary: Results = { generatedAt: new Date().toISOString(), command, durationSeconds: seconds, machine: machineRecord, rows };
  process.stdout.write(`\n${markdownTable(rows)}\n\n${footer(summary)}\n`);
  process.stdout.write(`\nTargets: ${tally(rows)}.\n`);
  for (const r of rows.filter((x) => x.target?.met === false)) process.stdout.write(`  ${verdict(r.target)} — ${r.label} (${r.target!.text})\n`);

  let profiles: ReturnType<typeof summarize>[] = [];
  if (profileDir) {
    const dirs = existsSync(profileDir) ? readdirSync(profileDir).sort() : [];
    // Every thread writes a profile (pool workers, the DuckDB file's thread, tsx's loader): the ones that hardly ran say nothing.
    profiles = dirs.flatMap((d) => profileFiles(join(profileDir, d))).map((f) => summarize(f, 15)).filter((p) => p.busyMs >= 50);
    process.stdout.write(`\nCPU profiles (${profileDir}):\n\n${profiles.map(formatSummary).join('\n\n')}\n`);
  }
  const results = {
    generatedAt: summary.generatedAt,
    command,
    mode: opts.quick ? 'quick' : 'full',
    durationSeconds: seconds,
    machine: { ...machineRecord, postgresSettings: { synchronous_commit: 'off (bench database only)' } },
    ...(rebuilt ? { rebuiltDistBecauseOf: rebuilt } : {}),
    rows,
    ...(profiles.length > 0 ? { profiles } : {}),
  };
  // A full run of every suite is the record (bench/results.json, and the table docs/performance.md carries: bench/results.md);
  // --quick and --only runs go to bench/out/ so they never replace it.
  const record = !opts.quick && opts.only.size === SUITES.length;
  const outDir = fileURLToPath(new URL(record ? '.' : './out', import.meta.url));
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, record ? 'results.json' : 'results-partial.json');
  writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  const md = join(outDir, record ? 'results.md' : 'results-partial.md');
  writeFileSync(md, resultsMarkdown(summary));
  process.stdout.write(`\nwrote ${out} and ${md}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
