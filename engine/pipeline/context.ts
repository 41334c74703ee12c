/**
 * The per-step view the executors of steps/ work with: the evaluation scope
 * (run scopes plus the enclosing loop), template helpers, the step's output
 * log and the cancel signal. `StepFailure` is how an executor fails while
 * still publishing a state (a failed build, an http status ≥ 400, a false
 * check).
 */
import type { ConnectionRegistry } from '../connections/index.js';
import { EngineError } from '../errors.js';
import type { EvalScope, Value } from './evaluate.js';
import { expressionText, renderDeep, renderText, renderTyped, type VarLookup } from './render.js';
import type { PipelineServices } from './types.js';

export class StepFailure extends EngineError {
  constructor(
    message: string,
    readonly state?: Value,
  ) {
    super('node', message);
    this.name = 'StepFailure';
  }
}

/** Run-wide mutable state shared by every step (and model hooks of build steps). */
export interface RunScopes {
  readonly env: Record<string, unknown>;
  readonly store: Record<string, Value>;
  readonly state: Record<string, Value>;
  readonly timestamp: Record<string, Value>;
  readonly execution: Record<string, Value>;
  /** Extra scopes (model hooks: `model`, `target`). */
  readonly extra?: Readonly<Record<string, Value>>;
}

export interface StepContext {
  readonly recordId: string;
  readonly scope: EvalScope;
  readonly vars: VarLookup;
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
  readonly projectRoot: string;
  readonly connections: ConnectionRegistry;
  readonly services: PipelineServices;
  readonly allowCommandSteps: boolean;
  readonly killGraceMs: number;
  readonly scopes: RunScopes;
  /** `${NAME}` then `{…}`, as text. */
  text(s: string): string;
  /** A single-template string keeps its value. */
  typed(s: string): Value;
  /** Every string of a YAML value rendered. */
  deep(v: unknown, typed: boolean): Value;
  /** An expression key's source text (`${NAME}` substituted, an outer `{…}` removed). */
  expression(s: string): string;
}

export function makeScope(scopes: RunScopes, loop: Value | undefined, now: (() => Date) | undefined): EvalScope {
  const roots = new Map<string, unknown>([
    ['env', scopes.env],
    ['store', scopes.store],
    ['state', scopes.state],
    ['timestamp', scopes.timestamp],
    ['execution', scopes.execution],
    ['loop', loop ?? null],
  ]);
  for (const [k, v] of Object.entries(scopes.extra ?? {})) roots.set(k, v);
  return now ? { roots, now } : { roots };
}

export function stepHelpers(scope: EvalScope, vars: VarLookup): Pick<StepContext, 'text' | 'typed' | 'deep' | 'expression'> {
  return {
    text: (s) => renderText(s, scope, vars),
    typed: (s) => renderTyped(s, scope, vars),
    deep: (v, typed) => renderDeep(v, scope, vars, typed),
    expression: (s) => expressionText(s, vars, scope),
  };
}

/** Rejects when `signal` aborts; resolves after `ms` otherwise. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(cancelled());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function cancelled(): EngineError {
  return new EngineError('cancelled', 'cancelled');
}
