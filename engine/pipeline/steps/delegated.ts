/**
 * Steps whose work the host runs:
 * `build` — keys resolved here, the build itself by `services.build` — and
 * `replication`, by `services.replication` when the host has a replication
 * runner.
 */
import { statSync } from 'node:fs';
import { EngineError } from '../../errors.js';
import { fileRefPath, type BuildStep, type ReplicationStep } from '../../jobs/index.js';
import { StepFailure, type StepContext } from '../context.js';
import { toText, type Value } from '../evaluate.js';
import { projectPath } from '../paths.js';
import type { ResolvedBuildStep } from '../types.js';

export const NO_REPLICATION_RUNNER = 'replication steps need the replication runner';

function stringMap(v: Value): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: toText(x), enumerable: true, writable: true, configurable: true });
  return out;
}

function objectOf(v: Value): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The build step with templates resolved and `build` as an absolute, existing project directory. */
export function resolveBuildStep(step: BuildStep, x: StepContext, selectOverride?: readonly string[]): ResolvedBuildStep {
  const raw = x.text(step.build);
  const name = fileRefPath(raw) ?? raw;
  const dir = projectPath(x.projectRoot, name, 'build directory');
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new EngineError('node', `build directory ${JSON.stringify(name)} does not exist`);
  const list = (items: readonly string[] | undefined) => items?.map((s) => x.text(s)).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  const out: Record<string, unknown> = { dir, build: name, command: step.command };
  const put = (k: string, v: unknown) => {
    if (v !== undefined) out[k] = v;
  };
  put('target', step.target === undefined ? undefined : x.text(step.target));
  put('select', selectOverride ?? list(step.select));
  put('exclude', list(step.exclude));
  put('vars', step.vars === undefined ? undefined : objectOf(x.deep(step.vars, true)));
  put('env', step.env === undefined ? undefined : stringMap(x.deep(step.env, false)));
  put('schema', step.schema === undefined ? undefined : x.text(step.schema));
  put('prod', step.prod);
  put('full_refresh', step.full_refresh);
  put('no_seeds', step.no_seeds);
  put('range', step.range === undefined ? undefined : x.text(step.range));
  put('fail_fast', step.fail_fast);
  put('threads', step.threads);
  put('recursive', step.recursive);
  return out as unknown as ResolvedBuildStep;
}

export async function runBuild(step: BuildStep, x: StepContext, selectOverride?: readonly string[]): Promise<Value> {
  if (x.services.build === undefined) throw new EngineError('node', 'build steps are not available on this host');
  const resolved = resolveBuildStep(step, x, selectOverride);
  const r = await x.services.build(resolved, { signal: x.signal, log: x.log, hooks: { store: x.scopes.store, state: x.scopes.state } });
  if (r.failure !== undefined) throw new StepFailure(`build failed: ${r.failure}`, r.state);
  return r.state;
}

export async function runReplication(step: ReplicationStep, x: StepContext, modeOverride?: string): Promise<Value> {
  // The daemon provides the runner (actors/daemon/pipeline-run.ts → runReplicationFile); hosts without one
  // (model hooks of a local build) fail the step.
  if (x.services.replication === undefined) throw new EngineError('node', NO_REPLICATION_RUNNER);
  const raw = x.text(step.path);
  const file = fileRefPath(raw) ?? raw;
  projectPath(x.projectRoot, file);
  const mode = modeOverride ?? step.mode;
  const vars = step.vars === undefined ? undefined : objectOf(x.deep(step.vars, true));
  const r = await x.services.replication(
    {
      file,
      path: step.path,
      ...(step.streams !== undefined ? { streams: step.streams.map((s) => x.text(s)) } : {}),
      ...(mode !== undefined ? { mode: mode as ReplicationStep['mode'] } : {}),
      ...(vars !== undefined ? { vars } : {}),
    },
    { signal: x.signal, log: x.log },
  );
  if (r.failure !== undefined) throw new StepFailure(r.failure, r.state);
  return r.state;
}
