/**
 * `service run <file>`: runs one job file (replication, pipeline, monitor,
 * query) on this machine, without a daemon, through the daemon's own
 * ExecutionService. The job file's folder plays the project root (so `path`,
 * `build` and `file://` references resolve against it); connections come
 * from an `env.yaml` beside the file, `~/.service/env.yaml` and URL-valued
 * environment variables; the state store is an in-memory
 * SQLite database holding a one-off project, job and execution.
 *
 * Progress (the execution's state changes and every task or step line as it
 * is written) goes to stderr; stdout gets the result: a short summary, or
 * with `--json` one object — the Execution record's fields plus `tasks`
 * (replication, monitor, query) or `steps` (pipeline). Exit 0 for success or
 * warning, 1 otherwise, 2 for a usage error. SIGINT cancels the execution.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { closeAllDuckDbActors } from '../actors/duckdb-actor.js';
import { ExecutionService } from '../actors/daemon/executions.js';
import { lineRouter } from '../actors/daemon/line-router.js';
import { TaskPool } from '../actors/pool.js';
import { loadConnections, readEnvFile, type ConnectionRegistry } from '../engine/connections/index.js';
import { EngineError, errorChain } from '../engine/errors.js';
import { ProjectTree } from '../engine/files/project-tree.js';
import { homeEnvVars } from '../engine/home-env.js';
import { newDefaultJob } from '../engine/daemon-projects/default-job.js';
import { jobFileContext, validateContent } from '../engine/daemon-projects/job-files.js';
import { loadJobFile } from '../engine/daemon-projects/load-job-file.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { publicExecution, publicStep, publicTask } from '../engine/state/public-execution.js';
import { isTerminalStatus, type ExecutionRecord, type JobRecord, type StateStore } from '../engine/state/store.js';
import type { JobKind } from '../engine/jobs/index.js';
import { cliLogger } from './cli-logger.js';
import type { Io } from './io.js';
import { flagSet, flagValue, flagValues, type ParsedArgs } from './parse-command-line.js';

/** How often the store is read for progress; the work itself is not slowed by it. */
const POLL_MS = 100;

export interface RunArgs {
  readonly file: string;
  readonly json: boolean;
  readonly vars: Readonly<Record<string, string>>;
  readonly allowCommandSteps: boolean;
  /** A state store kept between runs (monitor baselines); in memory when absent. */
  readonly state?: string;
}

const usage = (m: string) => new EngineError('usage', m);

/** `service run`'s options from its parsed command line. */
export function runArgs(a: ParsedArgs): RunArgs {
  const vars: Record<string, string> = {};
  for (const text of flagValues(a, 'var')) {
    const eq = text.indexOf('=');
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(text.slice(0, eq))) throw usage(`invalid argument "${text}" for "--var": expected K=V`);
    vars[text.slice(0, eq)] = text.slice(eq + 1);
  }
  const state = flagValue(a, 'state');
  if (state === '') throw usage('flag needs an argument: --state');
  return { file: a.positionals[0]!, json: flagSet(a, 'json'), vars, allowCommandSteps: flagSet(a, 'allow-command-steps'), ...(state !== undefined ? { state } : {}) };
}

/** The ExecutionService's dependencies for one local project rooted at `root`. */
function localExecutions(store: StateStore, root: string, registry: ConnectionRegistry, allowCommandSteps: boolean, io: Io) {
  const tree = new ProjectTree(root);
  const projectEnv = readEnvFile(join(root, 'env.yaml'), 'project', root).env;
  const pool = new TaskPool({ maxThreads: 2, minThreads: 0 });
  const lines = lineRouter();
  const executions = new ExecutionService({
    store,
    pool,
    lines,
    logger: cliLogger({}, io.err),
    maxRunning: 1,
    owner: 'service-run',
    connections: () => registry,
    projectRoot: () => root,
    allowCommandSteps,
    loadJobFile: (projectId, fileName) => loadJobFile({ projectId, tree, store, connections: () => registry, now: () => new Date() }, fileName),
    envLookup: () => {
      const hostEnv = homeEnvVars();
      return (name) => projectEnv[name] ?? hostEnv[name] ?? (process.env[name] || undefined);
    },
  });
  return { executions, close: async () => { await pool.destroy(); lines.close(); } };
}

/** Prints what the task or step records gained since the last call: new output lines and final statuses. */
function progressPrinter(store: StateStore, execId: string, pipeline: boolean, io: Io) {
  const printed = new Map<string, { chars: number; done: boolean }>();
  return async () => {
    const records: { id: string; name: string; status: string; error: string | null; output: string }[] = pipeline
      ? (await store.listSteps(execId)).map((s) => ({ id: s.step_id, name: s.step_id, status: s.status, error: s.error, output: s.output ?? '' }))
      : (await store.listTasks(execId)).map((t) => ({ id: t.task_id, name: t.stream_name, status: t.status, error: t.error, output: t.output ?? '' }));
    for (const r of records) {
      const seen = printed.get(r.id) ?? { chars: 0, done: false };
      const fresh = r.output.slice(seen.chars);
      const end = fresh.lastIndexOf('\n') + 1; // whole lines only; the rest comes next time
      for (const line of fresh.slice(0, end).split('\n').slice(0, -1)) io.err(`[${r.name}] ${line}\n`);
      seen.chars += end;
      if (!seen.done && isTerminalStatus(r.status as ExecutionRecord['status'])) {
        seen.done = true;
        io.err(`[${r.name}] ${r.status}${r.error ? `: ${r.error}` : ''}\n`);
      }
      printed.set(r.id, seen);
    }
  };
}

/**
 * The one-off project and job of this run. With a persistent store they are
 * found again on the next run of the same file (ids derived from its path):
 * a monitor's baseline belongs to its job, so that is what lets a local
 * monitor raise change events between runs.
 */
async function localJob(store: StateStore, file: string, kind: JobKind, persistent: boolean): Promise<{ job: JobRecord }> {
  const name = basename(file);
  if (!persistent) {
    const project = await store.createProject({ name: 'local' });
    return { job: await store.createJob(newDefaultJob(project.id, name, kind)) };
  }
  const key = createHash('sha256').update(dirname(file)).digest('hex').slice(0, 16);
  const id = `proj_${key}`;
  const project = (await store.getProject(id)) ?? (await store.createProject({ name: `local-${key}`, id }));
  const existing = (await store.jobsByFile(project.id, name)).find((j) => j.default && j.file_name === name);
  if (existing && existing.type === kind) return { job: existing };
  if (existing) throw new EngineError('node', `the state store holds job ${existing.id} for ${name} as a ${existing.type} file; it is now a ${kind} file (use another --state)`);
  return { job: await store.createJob(newDefaultJob(project.id, name, kind)) };
}

function summaryText(exec: ExecutionRecord, records: readonly { name: string; status: string; rows?: number; error: string | null }[]): string {
  const out = [`Execution ${exec.exec_id} ${exec.status}: rows=${exec.rows} bytes=${exec.bytes} duration=${exec.duration ?? 0}s`];
  for (const r of records) out.push(`  ${r.name}  ${r.status}${r.rows !== undefined ? `  rows=${r.rows}` : ''}${r.error ? `  ${r.error}` : ''}`);
  if (exec.error) out.push(`error: ${exec.error}`);
  return out.join('\n') + '\n';
}

export async function runFileCommand(a: ParsedArgs, io: Io): Promise<number> {
  const args = runArgs(a);
  const file = resolve(args.file);
  if (!existsSync(file) || !statSync(file).isFile()) {
    io.err(`fatal: job file ${JSON.stringify(args.file)} does not exist\n`);
    return 1;
  }
  const root = dirname(file);
  const name = basename(file);
  const registry = loadConnections({ projectEnvFile: join(root, 'env.yaml') });
  for (const p of registry.problems) io.err(`warning: ${p.message}\n`);
  const validation = validateContent(name, readFileSync(file), jobFileContext(new ProjectTree(root), () => registry));
  if (validation.kind === null) {
    io.err(`fatal: ${args.file} is not a job file (a replication, pipeline or monitor YAML file, or a .sql file with a "-- connection:" header)\n`);
    return 1;
  }
  if (validation.kind === 'invalid-yaml' || validation.problems.length > 0) {
    for (const p of validation.problems) io.err(`${args.file}:${p.line ?? ''}:${p.column ?? ''}: ${p.path}: ${p.message}\n`);
    io.err(`fatal: invalid job file ${args.file}\n`);
    return 1;
  }
  const kind = validation.kind;
  let store: StateStore;
  try {
    store = await openStateStore(args.state ?? ':memory:');
  } catch (err) {
    io.err(`fatal: --state ${JSON.stringify(args.state)}: ${errorChain(err)}\n`);
    return 1;
  }
  const local = localExecutions(store, root, registry, args.allowCommandSteps, io);
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(130); // a second Ctrl-C does not wait for the cancel to settle
    io.err('cancelling (press Ctrl-C again to quit at once)\n');
    void local.executions.cancel(projectId, execId).catch(() => {});
  };
  let projectId = '';
  let execId = '';
  try {
    const { job } = await localJob(store, file, kind, args.state !== undefined);
    projectId = job.project_id;
    execId = await local.executions.requestRun(job, Object.keys(args.vars).length > 0 ? { vars: args.vars } : {}, 'manual');
    process.on('SIGINT', onSigint);
    const progress = progressPrinter(store, execId, kind === 'pipeline', io);
    let exec = (await store.findExecution(execId))!;
    while (!isTerminalStatus(exec.status)) {
      await delay(POLL_MS);
      await progress();
      exec = (await store.findExecution(execId))!;
    }
    await local.executions.shutdown(60_000); // the work may still be settling after a cancel
    await progress();
    exec = (await store.findExecution(execId))!;
    if (kind === 'pipeline') {
      const steps = await store.listSteps(execId);
      if (args.json) io.out(JSON.stringify({ ...publicExecution(exec), steps: steps.map(publicStep) }) + '\n');
      else io.out(summaryText(exec, steps.map((s) => ({ name: s.step_id, status: s.status, error: s.error }))));
    } else {
      const tasks = await store.listTasks(execId);
      if (args.json) io.out(JSON.stringify({ ...publicExecution(exec), tasks: tasks.map(publicTask) }) + '\n');
      else io.out(summaryText(exec, tasks.map((t) => ({ name: t.stream_name, status: t.status, rows: t.rows, error: t.error }))));
    }
    return exec.status === 'success' || exec.status === 'warning' ? 0 : 1;
  } catch (err) {
    io.err(`fatal: ${registry.redact(errorChain(err))}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    await local.close();
    await store.close();
    // Every DuckDB file this run opened, including those a build step resolved in its own directory.
    await closeAllDuckDbActors().catch(() => {});
  }
}
