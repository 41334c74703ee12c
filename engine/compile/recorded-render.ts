/**
 * One model rendered with everything the compile cache must know of the
 * render recorded: each node and env-var lookup with its answer, and the
 * warnings it logged. The warnings are kept, not logged: the caller logs
 * them in project order, so a model rendered on a render worker
 * (parallel-render.ts) logs exactly where an in-thread render would.
 */
import { lookupVar } from '../home-env.js';
import type { Level, Logger } from '../log.js';
import type { ModelSource } from '../project/load.js';
import { nodeSignature, type Lookup } from './compile-cache.js';
import type { CompiledModel } from './compiled.js';
import type { IndexedNode, NodeLookup } from './node-index.js';
import type { RenderEnv } from './render-model.js';

export type LogLines = [Level, string][];

export interface RenderOutcome {
  /** Absent when the render failed (`error`). */
  readonly model?: CompiledModel;
  /** What the render threw; a render worker's comes back as a RemoteTaskError with the same message chain and code. */
  readonly error?: unknown;
  readonly lookups: readonly Lookup[];
  /** Warnings, in the order logged (also those before a failure). */
  readonly logs: LogLines;
  /** False when the render listed every node (only error paths do): its lookups do not say what it read. */
  readonly cacheable: boolean;
}

export const signatureOf = (n: IndexedNode | undefined): string | null => (n === undefined ? null : nodeSignature(n));

/** Renders `m` with `compileModel` in an env that records lookups and warnings. */
export function renderRecorded(env: RenderEnv, m: ModelSource, compileModel: (env: RenderEnv, m: ModelSource) => CompiledModel): RenderOutcome {
  const lookups: Lookup[] = [];
  const logs: LogLines = [];
  let cacheable = true;
  const index: NodeLookup = {
    get all() {
      cacheable = false; // only error paths list every node
      return env.index.all;
    },
    resolve(text) {
      const n = env.index.resolve(text);
      lookups.push(['r', text, signatureOf(n)]);
      return n;
    },
    fullNameMatch(text) {
      const n = env.index.fullNameMatch(text);
      lookups.push(['f', text, signatureOf(n)]);
      return n;
    },
  };
  const logger: Logger = { log: (level, message) => void logs.push([level, message]), enabled: (level) => env.logger.enabled(level) };
  const recording: RenderEnv = {
    ...env,
    index,
    logger,
    envVar(name) {
      const v = lookupVar(name, env.stepEnv);
      lookups.push(['e', name, v ?? null]);
      return v;
    },
  };
  try {
    return { model: compileModel(recording, m), lookups, logs, cacheable };
  } catch (error) {
    return { error, lookups, logs, cacheable };
  }
}
