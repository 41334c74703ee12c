/**
 * Runs pipeline files through engine/pipeline's runner without the daemon:
 * the YAML is validated like a saved job file (so tests use the real model),
 * step records and output are kept in memory, and the services are the
 * daemon's (queries, in-process builds) unless a test replaces them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { queryOnConnection, runBuildStep } from '../../actors/pipeline-services.js';
import { connectionKind, loadConnections, type ConnectionRegistry } from '../../engine/connections/index.js';
import { validateJobFile, type PipelineFile } from '../../engine/jobs/index.js';
import type { Value } from '../../engine/pipeline/evaluate.js';
import { runPipeline, type PipelineResult } from '../../engine/pipeline/runner.js';
import { executionScope, pipelineVars, timestampScope } from '../../engine/pipeline/scopes.js';
import type { PipelineOptions, PipelineServices, StepEvent } from '../../engine/pipeline/types.js';

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(prefix = 'svc-pipe-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

export function writeTree(root: string, files: Readonly<Record<string, string>>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
}

export interface Workspace {
  readonly base: string;
  /** The project root. */
  readonly root: string;
  /** Directory of the FILES file connection. */
  readonly files: string;
  readonly connections: ConnectionRegistry;
}

/** A project root and connections: DUCK (a DuckDB file), FILES (file://), plus `extraEnv` lines. */
export function workspace(extraEnv = ''): Workspace {
  const base = tempDir();
  const root = join(base, 'root');
  const files = join(base, 'exports');
  const home = join(base, 'home');
  for (const d of [root, files, home]) mkdirSync(d, { recursive: true });
  const envFile = join(base, 'env.yaml');
  writeFileSync(envFile, `connections:\n  DUCK:\n    type: duckdb\n    instance: ${join(base, 'lake.duckdb')}\n  FILES:\n    type: file\n    url: file://${files}\n${extraEnv}`);
  const connections = loadConnections({ projectEnvFile: envFile, env: { SERVICE_HOME_DIR: home }, cwd: base });
  return { base, root, files, connections };
}

export function parsePipeline(text: string, ws: Workspace): PipelineFile {
  const v = validateJobFile('pipelines/p.yaml', text, {
    fileExists: (p) => existsSync(join(ws.root, p)),
    connectionKind: (n) => {
      const c = ws.connections.get(n);
      return c === undefined ? undefined : connectionKind(c.type);
    },
  });
  if (v.kind !== 'pipeline' || v.parsed === undefined) throw new Error(`invalid pipeline: ${JSON.stringify(v.problems)}`);
  return v.parsed;
}

export interface RunOutput {
  readonly result: PipelineResult;
  /** Final record per step id, in the order steps finished (skipped ones included). */
  readonly records: Map<string, StepEvent>;
  /** Step ids in start order (as the store's `seq`). */
  readonly started: string[];
  readonly output: Map<string, string[]>;
  readonly store: Record<string, Value>;
  readonly state: Record<string, Value>;
}

export interface RunOptions {
  readonly allowCommandSteps?: boolean;
  readonly signal?: AbortSignal;
  readonly services?: Partial<PipelineServices>;
  readonly vars?: Record<string, unknown>;
  readonly layers?: (name: string) => string | undefined;
  readonly overrides?: { mode?: string; select?: readonly string[] };
  readonly tuning?: Pick<PipelineOptions, 'stepLimit' | 'retryDelayMs' | 'killGraceMs'>;
}

export async function runText(text: string, ws: Workspace, o: RunOptions = {}): Promise<RunOutput> {
  const file = parsePipeline(text, ws);
  const records = new Map<string, StepEvent>();
  const started: string[] = [];
  const output = new Map<string, string[]>();
  const vars = pipelineVars(file.env, {}, o.vars ?? {}, o.layers ?? (() => undefined));
  const store: Record<string, Value> = {};
  const state: Record<string, Value> = {};
  const services: PipelineServices = {
    query: queryOnConnection,
    build: (step, c) => runBuildStep(step, c, { connections: ws.connections, pipeline: options, vars: vars.lookup }),
    ...o.services,
  };
  const options: PipelineOptions = {
    projectRoot: ws.root,
    connections: ws.connections,
    services,
    allowCommandSteps: o.allowCommandSteps ?? false,
    retryDelayMs: 20,
    killGraceMs: 300,
    ...o.tuning,
  };
  const result = await runPipeline({
    steps: file.steps,
    scopes: {
      env: vars.env,
      store,
      state,
      timestamp: timestampScope(new Date('2025-03-01T08:30:00Z')),
      execution: executionScope({ exec_id: 'e1', job_id: 'job_x', job_name: 'p', file_name: 'pipelines/p.yaml', trigger: 'api', start_time: '2025-03-01T08:30:00.000Z' }),
    },
    vars: vars.lookup,
    sink: {
      async record(e) {
        if (e.status === 'running' || e.status === 'skipped') started.push(e.stepId);
        records.delete(e.stepId);
        records.set(e.stepId, e);
      },
      output(id, line) {
        if (!output.has(id)) output.set(id, []);
        output.get(id)!.push(line);
      },
    },
    signal: o.signal ?? new AbortController().signal,
    options,
    ...(o.overrides ? { overrides: o.overrides } : {}),
  });
  return { result, records, started, output, store, state };
}

/** `{id: status}` of the final records. */
export function statuses(out: RunOutput): Record<string, string> {
  return Object.fromEntries([...out.records].map(([id, e]) => [id, e.status]));
}
