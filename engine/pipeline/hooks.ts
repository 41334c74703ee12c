/**
 * Model hooks: each `hooks.start` / `hooks.end`
 * entry is a pipeline step object, validated like a step of a pipeline file
 * and run by the same runner. Their templates see `model.{name, schema,
 * database, full_name, mode}`, `target.name`, `env.*` (the build's vars),
 * `timestamp.*`, and the `store.*` / `state.*` of the enclosing pipeline
 * (empty ones for a CLI build). Hook steps make no Step records: their
 * output goes to the host's log, prefixed with the phase.
 */
import { existsSync } from 'node:fs';
import { stringify } from 'yaml';
import type { ModelTask } from '../build-plan/node-task.js';
import { connectionKind } from '../connections/index.js';
import { EngineError } from '../errors.js';
import { validateJobFile, type PipelineStep } from '../jobs/index.js';
import type { Value } from './evaluate.js';
import { projectPath } from './paths.js';
import type { VarLookup } from './render.js';
import { runPipeline } from './runner.js';
import { timestampScope } from './scopes.js';
import type { ModelHookScope, PipelineOptions } from './types.js';

export type HookPhase = 'start' | 'end';

export interface ModelHookOptions {
  readonly options: PipelineOptions;
  /** `env.*`; default: the model's vars (the build's vars with `--vars` / step `vars`, merged per sub-project). */
  readonly env?: Readonly<Record<string, unknown>>;
  readonly vars: VarLookup;
  readonly targetName: string;
  /** The enclosing pipeline's store and state; fresh ones when absent. */
  readonly shared?: ModelHookScope;
  readonly log: (line: string) => void;
}

const parsed = new Map<string, PipelineStep | Error>();

/** One hook entry as a pipeline step; `error parsing <phase> hook <i> for model '<n>'` when it is not a valid step. */
export function parseHook(entry: unknown, phase: HookPhase, index: number, model: string, options: Pick<PipelineOptions, 'projectRoot' | 'connections'>): PipelineStep {
  const key = JSON.stringify(entry) ?? 'null';
  let step = parsed.get(key);
  if (step === undefined) {
    const text = stringify({ steps: [entry] });
    const v = validateJobFile('hook.yaml', text, {
      fileExists: (p) => {
        try {
          return existsSync(projectPath(options.projectRoot, p));
        } catch {
          return false;
        }
      },
      connectionKind: (name) => {
        const c = options.connections.get(name);
        return c === undefined ? undefined : connectionKind(c.type);
      },
    }, { as: 'pipeline' });
    if (v.kind === 'pipeline' && v.parsed !== undefined && v.parsed.steps.length === 1) step = v.parsed.steps[0]!;
    else {
      const p = v.problems[0];
      const where = p === undefined ? '' : p.path.replace(/^steps\[0\]\.?/, '');
      step = new Error(p === undefined ? 'not a step' : `${where === '' ? '' : `${where}: `}${p.message}`);
    }
    if (parsed.size > 500) parsed.clear();
    parsed.set(key, step);
  }
  if (step instanceof Error) throw new EngineError('node', `error parsing ${phase} hook ${index + 1} for model '${model}'`, new EngineError('node', step.message));
  return step;
}

export function modelScope(task: ModelTask): Record<string, Value> {
  return {
    name: task.name,
    schema: task.relation.schema,
    database: task.relation.database ?? '',
    full_name: task.table,
    mode: task.mode,
  };
}

/** Runs one phase of a model's hooks; rejects with `<phase> hook failed for model '<n>': <cause>`. */
export async function runModelHooks(phase: HookPhase, task: ModelTask, signal: AbortSignal, o: ModelHookOptions): Promise<void> {
  const entries = phase === 'start' ? task.config.hooks.start : task.config.hooks.end;
  if (entries.length === 0) return;
  // Each entry is parsed on its own: its position among the hooks names it (`step_<n>`).
  const steps = entries.map((e, i) => ({ ...parseHook(e, phase, i, task.name, o.options), position: i + 1 }) as PipelineStep);
  const now = o.options.now?.() ?? new Date();
  const result = await runPipeline({
    steps,
    scopes: {
      env: { ...(o.env ?? task.recipe.vars) },
      store: o.shared?.store ?? {},
      state: o.shared?.state ?? {},
      timestamp: timestampScope(now),
      execution: {},
      extra: { model: modelScope(task), target: { name: o.targetName } },
    },
    vars: o.vars,
    sink: {
      record: async () => {},
      output: (id, line) => o.log(`${phase} hook ${id} [${task.name}]: ${line}`),
    },
    signal,
    options: o.options,
  });
  if (result.status === 'cancelled') throw new EngineError('cancelled', 'cancelled');
  if (result.status === 'error') throw new EngineError('node', `${phase} hook failed for model '${task.name}'`, new EngineError('node', result.error ?? 'failed'));
}
