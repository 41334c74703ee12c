/**
 * The pipeline step runner: steps in order, each
 * with its `if`, `on_failure` and `goto`; groups with loops and bounded
 * concurrency; one Step record per executed or skipped step; `state.<id>`
 * published as each step finishes; at most `stepLimit` steps per run.
 *
 * Step record ids: the step's `id`, else `step_<n>`; children of a
 * group are prefixed with the group's record id and a dot, loop iterations
 * append `[<i>]` to the ids of the loop's direct children (`each.q[1]`), so
 * deeper descendants carry it in their prefix (`each.inner[1].x`). A step
 * that runs again in the same scope (a backwards `goto`) gets `#<n>` after
 * its id (`poll#2`): records are immutable once terminal.
 *
 * on_failure: `abort` stops the run (execution `error`); `warn`
 * marks the step `warning` and continues; `quiet` marks it `error` and
 * continues without affecting the execution; `break` marks it `warning` and
 * leaves the innermost group or loop (the whole run at the top level);
 * `retry` runs the step once more after 5 s, then aborts. A group whose
 * children abort fails itself with `<child id>: <message>` and applies its
 * own `on_failure` — `warn` around a group tolerates its children's errors.
 * `goto` applies after a step that ran (not one skipped by its `if`).
 */
import { EngineError, errorChain } from '../errors.js';
import type { GroupStep, PipelineStep } from '../jobs/index.js';
import { StepFailure, cancelled, makeScope, sleep, stepHelpers, type RunScopes, type StepContext } from './context.js';
import { evaluateSource, truthy, typeName, type Value } from './evaluate.js';
import type { VarLookup } from './render.js';
import { runCheck, runLog, runRead, runSet, runWrite } from './steps/basic.js';
import { runCommand } from './steps/command.js';
import { runBuild, runReplication } from './steps/delegated.js';
import { runHttp } from './steps/http.js';
import { runQuery } from './steps/query.js';
import type { PipelineOptions, StepEvent, StepSink, StepStatus } from './types.js';

export const STEP_LIMIT = 10_000;
export const RETRY_DELAY_MS = 5_000;
export const KILL_GRACE_MS = 5_000;

export type PipelineStatus = 'success' | 'warning' | 'error' | 'skipped' | 'cancelled';

export interface PipelineRunInput {
  readonly steps: readonly PipelineStep[];
  readonly scopes: RunScopes;
  readonly vars: VarLookup;
  readonly sink: StepSink;
  readonly signal: AbortSignal;
  readonly options: PipelineOptions;
  /** Run overrides: `mode` for replication steps, `select` for build steps. */
  readonly overrides?: { readonly mode?: string; readonly select?: readonly string[] };
  /** Prefix of every record id (model hooks nest their records under the build step). */
  readonly idPrefix?: string;
}

export interface PipelineResult {
  readonly status: PipelineStatus;
  /** `<step_id>: <message>` of the first failure, `(and <n> more)`; the reason of a skipped run. */
  readonly error: string | null;
  /** Totals over replication and build steps. */
  readonly rows: number;
  readonly bytes: number;
  /** The run output object of the last build step that ran. */
  readonly build: Readonly<Record<string, Value>> | null;
  /** Steps executed (not counting skipped ones). */
  readonly executed: number;
}

interface Failure {
  readonly id: string;
  readonly message: string;
}

type Flow = 'next' | 'break' | 'abort';

interface LevelResult {
  readonly flow: Flow;
  /** For `abort`: the failures that were not tolerated (empty for a cancel or the step limit). */
  readonly failures: readonly Failure[];
}

interface Frame {
  readonly prefix: string;
  readonly suffix: string;
  readonly loop: Value | undefined;
}

/** Children of a group aborted: the group fails with the first one's message. */
class GroupAbort extends EngineError {
  constructor(
    readonly failures: readonly Failure[],
    readonly state: Value,
    message: string,
  ) {
    super('node', message);
  }
}

const STATE_TYPES = new Set(['build', 'replication']);

class Run {
  #executed = 0;
  #anyWork = false;
  #anyWarning = false;
  #limitHit = false;
  #rows = 0;
  #bytes = 0;
  #build: Readonly<Record<string, Value>> | null = null;
  readonly #counts = new Map<string, number>();
  readonly #limit: number;

  constructor(private readonly input: PipelineRunInput) {
    this.#limit = input.options.stepLimit ?? STEP_LIMIT;
  }

  get signal(): AbortSignal {
    return this.input.signal;
  }

  #now(): string {
    return (this.input.options.now?.() ?? new Date()).toISOString();
  }

  async run(): Promise<PipelineResult> {
    const top = await this.level(this.input.steps, { prefix: this.input.idPrefix ?? '', suffix: '', loop: undefined });
    const base = { rows: this.#rows, bytes: this.#bytes, build: this.#build, executed: this.#executed };
    if (this.signal.aborted) return { ...base, status: 'cancelled', error: 'cancelled' };
    if (this.#limitHit) return { ...base, status: 'error', error: `step limit of ${this.#limit} exceeded` };
    if (top.flow === 'abort') return { ...base, status: 'error', error: summary(top.failures) };
    if (this.#anyWarning) return { ...base, status: 'warning', error: null };
    if (!this.#anyWork) return { ...base, status: 'skipped', error: 'nothing to do: every step was skipped' };
    return { ...base, status: 'success', error: null };
  }

  /** One list of sibling steps, following `goto`. */
  async level(steps: readonly PipelineStep[], frame: Frame): Promise<LevelResult> {
    const positions = new Map<string, number>();
    steps.forEach((s, i) => s.id !== undefined && positions.set(s.id, i));
    let i = 0;
    while (i < steps.length) {
      if (this.signal.aborted || this.#limitHit) return { flow: 'abort', failures: [] };
      const step = steps[i]!;
      const r = await this.step(step, frame);
      if (r.flow !== 'next') return r;
      const target = r.ran && step.goto !== undefined ? positions.get(step.goto) : undefined;
      i = target ?? i + 1;
    }
    return { flow: 'next', failures: [] };
  }

  #recordId(step: PipelineStep, frame: Frame): string {
    const id = frame.prefix + (step.id ?? `step_${step.position}`) + frame.suffix;
    const n = (this.#counts.get(id) ?? 0) + 1;
    this.#counts.set(id, n);
    return n === 1 ? id : `${id}#${n}`;
  }

  #context(recordId: string, frame: Frame): StepContext {
    const { options, scopes, vars, sink } = this.input;
    const scope = makeScope(scopes, frame.loop, options.now);
    return {
      recordId,
      scope,
      vars,
      signal: this.signal,
      log: (line) => sink.output(recordId, line),
      projectRoot: options.projectRoot,
      connections: options.connections,
      services: options.services,
      allowCommandSteps: options.allowCommandSteps,
      killGraceMs: options.killGraceMs ?? KILL_GRACE_MS,
      scopes,
      ...stepHelpers(scope, vars),
    };
  }

  async #record(e: Omit<StepEvent, 'state'> & { state?: Value | null }): Promise<void> {
    await this.input.sink.record({ ...e, state: e.state ?? null });
  }

  async step(step: PipelineStep, frame: Frame): Promise<LevelResult & { ran: boolean }> {
    const recordId = this.#recordId(step, frame);
    const x = this.#context(recordId, frame);
    let condError: unknown;
    if (step.if !== undefined) {
      let go = true;
      try {
        go = typeof step.if === 'boolean' ? step.if : truthy(evaluateSource(x.expression(step.if), x.scope));
      } catch (err) {
        condError = err;
      }
      if (!go && condError === undefined) {
        const t = this.#now();
        await this.#record({ stepId: recordId, type: step.type, status: 'skipped', error: null, startTime: t, endTime: t });
        return { flow: 'next', failures: [], ran: false };
      }
    }
    if (this.#executed >= this.#limit) {
      this.#limitHit = true;
      return { flow: 'abort', failures: [], ran: false };
    }
    this.#executed++;
    this.#anyWork = true;
    const startTime = this.#now();
    await this.#record({ stepId: recordId, type: step.type, status: 'running', error: null, startTime, endTime: null });

    let state: Value | undefined;
    let failure: { message: string; children?: readonly Failure[] } | undefined;
    for (let attempt = 1; ; attempt++) {
      failure = undefined;
      try {
        if (condError !== undefined) throw condError;
        state = await this.#execute(step, x, frame);
        break;
      } catch (err) {
        if (this.signal.aborted || (err instanceof EngineError && err.code === 'cancelled' && !(err instanceof GroupAbort))) {
          x.log('cancelled');
          await this.#record({ stepId: recordId, type: step.type, status: 'cancelled', error: 'cancelled', startTime, endTime: this.#now() });
          return { flow: 'abort', failures: [], ran: true };
        }
        if (err instanceof StepFailure || err instanceof GroupAbort) state = err.state;
        failure = err instanceof GroupAbort ? { message: err.message, children: err.failures } : { message: errorChain(err) };
        if (step.on_failure === 'retry' && attempt === 1 && condError === undefined && !this.#limitHit) {
          const delay = this.input.options.retryDelayMs ?? RETRY_DELAY_MS;
          x.log(`error: ${failure.message}`);
          x.log(`retrying in ${delay / 1000} s`);
          try {
            await sleep(delay, this.signal);
          } catch {
            await this.#record({ stepId: recordId, type: step.type, status: 'cancelled', error: 'cancelled', startTime, endTime: this.#now() });
            return { flow: 'abort', failures: [], ran: true };
          }
          continue;
        }
        break;
      }
    }
    this.#publish(step, state);
    if (failure === undefined) {
      await this.#record({ stepId: recordId, type: step.type, status: 'success', error: null, startTime, endTime: this.#now(), state: state ?? null });
      return { flow: 'next', failures: [], ran: true };
    }
    x.log(`error: ${failure.message}`);
    const policy = step.on_failure;
    const status: StepStatus = policy === 'warn' || policy === 'break' ? 'warning' : 'error';
    if (status === 'warning') this.#anyWarning = true;
    await this.#record({ stepId: recordId, type: step.type, status, error: failure.message, startTime, endTime: this.#now(), state: state ?? null });
    if (this.#limitHit) return { flow: 'abort', failures: [], ran: true };
    switch (policy) {
      case 'warn':
      case 'quiet':
        return { flow: 'next', failures: [], ran: true };
      case 'break':
        return { flow: 'break', failures: [], ran: true };
      default:
        return { flow: 'abort', failures: failure.children ?? [{ id: recordId, message: failure.message }], ran: true };
    }
  }

  #publish(step: PipelineStep, state: Value | undefined): void {
    if (state === undefined) return;
    if (step.id !== undefined) {
      Object.defineProperty(this.input.scopes.state, step.id, { value: state, enumerable: true, writable: true, configurable: true });
    }
    if (STATE_TYPES.has(step.type) && state !== null && typeof state === 'object' && !Array.isArray(state)) {
      const o = state as Record<string, Value>;
      if (typeof o.rows === 'number') this.#rows += o.rows;
      if (typeof o.bytes === 'number') this.#bytes += o.bytes;
      if (step.type === 'build') this.#build = o;
    }
  }

  async #execute(step: PipelineStep, x: StepContext, frame: Frame): Promise<Value> {
    const overrides = this.input.overrides ?? {};
    switch (step.type) {
      case 'log':
        return runLog(step, x);
      case 'check':
        return runCheck(step, x);
      case 'set':
        return runSet(step, x);
      case 'write':
        return runWrite(step, x);
      case 'read':
        return runRead(step, x);
      case 'query':
        return runQuery(step, x);
      case 'http':
        return runHttp(step, x);
      case 'command':
        return runCommand(step, x);
      case 'build':
        return runBuild(step, x, overrides.select);
      case 'replication':
        return runReplication(step, x, overrides.mode);
      case 'group':
        return this.#group(step, x, frame);
    }
  }

  async #group(step: GroupStep, x: StepContext, frame: Frame): Promise<Value> {
    const prefix = `${x.recordId}.`;
    if (step.loop === undefined) {
      const r = await this.level(step.steps, { prefix, suffix: '', loop: frame.loop });
      this.#groupFailed(r, { iterations: 1 });
      return { iterations: 1 };
    }
    const items = this.#loopItems(step.loop, x);
    x.log(`loop over ${items.length} item(s), concurrency ${step.concurrency}`);
    let next = 0;
    let iterations = 0;
    let stop = false;
    const failures: Failure[] = [];
    let aborted = false;
    const worker = async () => {
      while (!stop && next < items.length && !this.signal.aborted && !this.#limitHit) {
        const i = next++;
        iterations++;
        const r = await this.level(step.steps, { prefix, suffix: `[${i}]`, loop: { value: items[i]!, index: i } });
        if (r.flow === 'break') stop = true;
        if (r.flow === 'abort') {
          stop = true;
          aborted = true;
          failures.push(...r.failures);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(step.concurrency, items.length)) }, worker));
    const state = { iterations };
    if (aborted) this.#groupFailed({ flow: 'abort', failures }, state);
    return state;
  }

  #groupFailed(r: LevelResult, state: Value): void {
    if (r.flow !== 'abort') return;
    if (this.signal.aborted) throw cancelled();
    if (this.#limitHit) throw new GroupAbort([], state, `step limit of ${this.#limit} exceeded`);
    const first = r.failures[0];
    throw new GroupAbort(r.failures, state, first === undefined ? 'a step failed' : `${first.id}: ${first.message}`);
  }

  #loopItems(loop: string | readonly unknown[], x: StepContext): readonly Value[] {
    const v = typeof loop === 'string' ? evaluateSource(x.expression(loop), x.scope) : x.deep(loop, true);
    if (!Array.isArray(v)) throw new EngineError('node', `loop must yield a list, got ${typeName(v)}`);
    return v;
  }
}

/** The first failure, and how many more. */
export function summary(failures: readonly Failure[]): string {
  if (failures.length === 0) return 'pipeline aborted';
  const first = `${failures[0]!.id}: ${failures[0]!.message}`;
  return failures.length > 1 ? `${first} (and ${failures.length - 1} more)` : first;
}

export function runPipeline(input: PipelineRunInput): Promise<PipelineResult> {
  return new Run(input).run();
}
