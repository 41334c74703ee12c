/**
 * The stages of `service build <command>` after the entry (command.ts):
 * turns the parsed arguments into a build request, loads, compiles and runs
 * it, and renders the result on stdout (payload) and stderr (logs). Returns
 * the exit code.
 */
import { planProjects, prepareBuildWith, prepareSubProjectsWith, type BuildParts, type BuildRequest, type PreparedBuild, type SubProjectResult } from '../../engine/build-plan/prepare-build.js';
import { lazyModule } from '../../engine/lazy-import.js';
import type { Logger } from '../../engine/log.js';
import type { TargetAhead } from '../../actors/build-run/target-ahead.js';
import type { BuildArgs, BuildCommand } from './args.js';
import { compileJson, compileText } from './render-compile.js';
import { listEntries, listText } from './render-list.js';
import { printFatal, type Io } from '../io.js';
import { errorChain } from '../../engine/errors.js';
import type { ExecutionResult } from './execute.js';
import { errorsBlock, failureSummary, runPayload, summaryLine, testEntries, testLine, testsSummary, type ResultRecord } from './render-run.js';
import { locateSqlError, nodeOfRecord } from './sql-error-location.js';

export function toRequest(args: BuildArgs, command: BuildCommand, path = args.path): BuildRequest {
  return {
    verb: command,
    path,
    target: args.target,
    select: args.select,
    exclude: args.exclude,
    schema: args.schema,
    prod: args.prod,
    vars: args.vars,
    recursive: args.recursive,
    fullRefresh: args.fullRefresh,
    ...(args.profilesDir !== undefined ? { profilesDir: args.profilesDir } : {}),
    // A command-line build keeps its compile cache in <build dir>/.service/ for the next command,
    // written once the command's output is out.
    compileCache: 'disk',
    deferCacheWrite: true,
  };
}

const dbtLoader = lazyModule<typeof import('../../engine/project/dbt/load-dbt.js')>(import.meta.url, '../../engine/project/dbt/load-dbt.js');
const renderer = lazyModule<typeof import('../../engine/compile/model-renderer.js')>(import.meta.url, '../../engine/compile/model-renderer.js');

/**
 * The dbt loader and the model renderer, loaded when first needed: a
 * compile whose models all come from the compile cache loads neither (≈45
 * modules).
 */
const PARTS: BuildParts = { dbt: () => dbtLoader.get().compileDbtBuild, renderer: () => renderer.get().modelRenderer };

/** Prepares (loads, compiles, selects) and runs one build command; `ahead`: the PostgreSQL target, connecting since before the compile. */
export async function runBuild(args: BuildArgs, command: BuildCommand, logger: Logger, io: Io, ahead?: TargetAhead): Promise<number> {
  await Promise.all([dbtLoader.preload(), renderer.preload()]);
  const plan = planProjects(args);
  if (plan.mode === 'independent') return independent(args, command, plan.root, plan.children, logger, io);
  const prepared = prepareBuildWith(toRequest(args, command), logger, PARTS);
  try {
    return await single(args, command, prepared, logger, io, ahead);
  } finally {
    prepared.writeCompileCache?.();
  }
}

async function single(args: BuildArgs, command: BuildCommand, p: PreparedBuild, logger: Logger, io: Io, ahead?: TargetAhead): Promise<number> {
  // "No models selected." alone does not say the directory holds nothing at all (a wrong path, a typo).
  if (p.compiled.nodes.length === 0) logger.log('warn', `no models or seeds found under ${p.root}`);
  switch (command) {
    case 'list': {
      const entries = listEntries(p.selected, p.targetName !== '', args.fullRefresh);
      if (args.json) io.out(JSON.stringify(entries) + '\n');
      else io.out(entries.length === 0 ? 'No models selected.\n' : listText(entries));
      return 0;
    }
    case 'compile':
      if (args.json) io.out(JSON.stringify(compileJson(p.selected, p.targetName, args.fullRefresh)) + '\n');
      else io.out(compileText(p.selected, args.fullRefresh));
      return 0;
    default: {
      const { executePrepared } = await import('./execute.js');
      const ex = await executePrepared(args, command, p, logger, ahead);
      return renderExecution(args, command, p, ex, logger, io);
    }
  }
}

/** Where a failed record's SQL error points in its model file (sql-error-location.ts). */
function sqlErrorLocator(p: PreparedBuild): (r: ResultRecord) => string | undefined {
  return (r) => locateSqlError(r.error, nodeOfRecord(r, p.selected), `service build compile ${p.root} -s ${nodeOfRecord(r, p.selected)?.name ?? r.name}`);
}

/** Failed records cut to their error's first line, followed by where it points. */
function briefErrors(records: readonly ResultRecord[], locate: (r: ResultRecord) => string | undefined): ResultRecord[] {
  return records.map((r) => {
    if (r.status !== 'error') return r;
    const at = locate(r);
    return { ...r, error: `${r.error.split('\n')[0]!}${at ? ` (${at})` : ''}` };
  });
}

/** Prints the summary, payload, errors block and fatal line of one executed project. */
/** `dbt`: a dbt project, whose `test --json` entries also carry each test's failing rows. */
function renderExecution(args: BuildArgs, command: 'run' | 'test', p: PreparedBuild, ex: ExecutionResult, logger: Logger, io: Io): number {
  const dbt = p.compiled.project.format === 'dbt';
  const payload = runPayload(p.root, p.targetName, ex.records);
  const locate = sqlErrorLocator(p);
  if (ex.tests.length > 0) {
    for (const t of ex.tests) logger.log(t.status === 'pass' ? 'info' : t.status === 'warn' ? 'warn' : 'error', testLine(t));
    logger.log('info', testsSummary(ex.tests));
  }
  logger.log('info', summaryLine(ex.durationMs, payload));
  // `tests` is additive (and only there when a data test ran): the payload's own fields are unchanged.
  if (args.json) io.out(JSON.stringify(command === 'test' ? testEntries(ex.records, dbt ? ex.tests : []) : { ...payload, ...(ex.tests.length > 0 ? { tests: ex.tests } : {}) }) + '\n');
  else if (payload.failed > 0) io.out(errorsBlock(ex.records, locate));
  else if (payload.total === 0) io.out('No models selected.\n');
  // The Errors block (or the JSON) holds each error in full; the fatal line repeats only its first line and where it points.
  if (payload.failed > 0) io.err(`fatal: build execution failed: ${failureSummary(briefErrors(ex.records, locate))}\n`);
  if (ex.signalExit !== undefined) return ex.signalExit;
  return payload.failed > 0 ? 1 : 0;
}

/** Independent mode: each child project prepared and rendered on its own. */
async function independent(args: BuildArgs, command: BuildCommand, root: string, children: readonly string[], logger: Logger, io: Io): Promise<number> {
  const results = prepareSubProjectsWith(toRequest(args, command, root), root, children, logger, PARTS);
  try {
    return await independentOutput(args, command, root, results, logger, io);
  } finally {
    for (const r of results) r.prepared?.writeCompileCache?.();
  }
}

async function independentOutput(args: BuildArgs, command: BuildCommand, root: string, results: readonly SubProjectResult[], logger: Logger, io: Io): Promise<number> {
  const failed = results.filter((r) => r.error !== undefined);
  if (command === 'list' || command === 'compile') {
    if (failed.length > 0) return printFatal(failed.map((r) => r.error), io, failed.map((r) => `could not compile sub-project ${r.dir}`));
    const ok = results.map((r) => r.prepared!);
    if (args.json) {
      const payload = ok.map((p) =>
        command === 'list'
          ? { path: p.root, target: p.targetName, nodes: listEntries(p.selected, p.targetName !== '', args.fullRefresh) }
          : { path: p.root, target: p.targetName, ...compileJson(p.selected, p.targetName, args.fullRefresh) },
      );
      io.out(JSON.stringify(payload) + '\n');
    } else {
      for (const [i, p] of ok.entries()) {
        const header = `=== Sub-project: ${results[i]!.dir} (target: ${p.targetName}) ===`;
        if (command === 'list') io.out(`${header}\n${listText(listEntries(p.selected, p.targetName !== '', args.fullRefresh)) || 'No models selected.\n'}\n`);
        else io.out(`# ${header}\n${compileText(p.selected, args.fullRefresh)}\n`);
      }
    }
    return 0;
  }
  return independentExecution(args, command as 'run' | 'test', root, results, logger, io);
}

/** Sub-projects executed one after another; a child that failed to load runs nothing. */
async function independentExecution(
  args: BuildArgs,
  command: 'run' | 'test',
  root: string,
  results: readonly { dir: string; path: string; prepared?: PreparedBuild; error?: unknown }[],
  logger: Logger,
  io: Io,
): Promise<number> {
  type Sub = { dir: string; payload: ReturnType<typeof runPayload> & { error: string }; fatal?: string };
  const subs: Sub[] = [];
  let signalExit: number | undefined;
  // Sub-projects run concurrently up to --threads, one at a time when any targets DuckDB
  // (a DuckDB file has one writer). Each child's text block is printed when it finishes;
  // the payload keeps directory order.
  const slots: (Sub | undefined)[] = results.map(() => undefined);
  const anyDuck = results.some((r) => r.prepared?.connection?.type === 'duckdb');
  let next = 0;
  // The run machinery (actors, drivers) loads only for run/test, not for list/compile.
  const { executePrepared } = await import('./execute.js');
  const worker = async () => {
    while (next < results.length && signalExit === undefined) {
      const i = next++;
      const r = results[i]!;
      if (!r.prepared) {
        const msg = errorChain(r.error);
        slots[i] = { dir: r.dir, payload: { ...runPayload(r.path, '', []), error: msg }, fatal: `could not compile sub-project ${r.dir}: ${msg}` };
        continue;
      }
      try {
        const ex = await executePrepared(args, command, r.prepared, logger);
        const payload = runPayload(r.path, r.prepared.targetName, ex.records);
        logger.log('info', summaryLine(ex.durationMs, payload));
        const locate = sqlErrorLocator(r.prepared);
        if (!args.json) io.out(`=== Sub-project: ${r.dir} (target: ${r.prepared.targetName}) ===\n${payload.failed > 0 ? errorsBlock(ex.records, locate) : ''}\n`);
        slots[i] = { dir: r.dir, payload: { ...payload, error: '' }, ...(payload.failed > 0 ? { fatal: `could not execute sub-project ${r.dir}: ${failureSummary(briefErrors(ex.records, locate))}` } : {}) };
        if (ex.signalExit !== undefined) signalExit = ex.signalExit;
      } catch (err) {
        const msg = errorChain(err);
        slots[i] = { dir: r.dir, payload: { ...runPayload(r.path, r.prepared.targetName, []), error: msg }, fatal: `could not execute sub-project ${r.dir}: ${msg}` };
      }
    }
  };
  await Promise.all(Array.from({ length: anyDuck ? 1 : Math.max(1, Math.min(args.threads, results.length)) }, worker));
  subs.push(...slots.filter((s): s is Sub => s !== undefined));
  const all = subs.flatMap((s) => s.payload.results);
  const agg = runPayload(root, args.target ?? '', all);
  if (args.json) {
    if (command === 'test') io.out(JSON.stringify(subs.map((s) => ({ path: s.payload.path, target: s.payload.target, results: testEntries(s.payload.results) }))) + '\n');
    else {
      const { path, target, total, ok, failed, skipped, rows, bytes, ok_names } = agg;
      const sub_projects = subs.map(({ payload: { path: p, target: t, error, results: rs, total: a, ok: b, failed: c, skipped: d, rows: e, bytes: f, ok_names: g } }) => ({ path: p, target: t, error, results: rs, total: a, ok: b, failed: c, skipped: d, rows: e, bytes: f, ok_names: g }));
      io.out(JSON.stringify({ path, target, sub_projects, total, ok, failed, skipped, rows, bytes, ok_names }) + '\n');
    }
  }
  const fatals = subs.filter((s) => s.fatal).map((s) => s.fatal!);
  if (fatals.length > 0) io.err(`fatal: ${fatals.join('; ')}\n`);
  if (signalExit !== undefined) return signalExit;
  return fatals.length > 0 ? 1 : 0;
}
