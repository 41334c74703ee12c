/**
 * What the main thread and a render worker (parallel-render.ts,
 * render-worker.ts) exchange. The worker gets one job message: everything a
 * render reads — the node index, macro prefixes, vars, target — and its
 * models as chunks; it answers once per chunk (a BlockingThread answer).
 */
import type { SerializedError } from '../errors.js';
import type { Lookup } from './cache-types.js';
import type { IndexedNode } from './node-index.js';
import type { ModelSource } from '../project/load.js';
import type { ModelConfig } from '../project/model-config.js';
import type { LogLines } from './recorded-render.js';

export interface RenderJob {
  readonly nodes: readonly IndexedNode[];
  /** Macro text in scope per discovery folder of the posted models. */
  readonly prefixes: Readonly<Record<string, string>>;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: { readonly name: string; readonly type: string; readonly schema: string };
  readonly stepEnv?: Readonly<Record<string, string>>;
  /** This worker's chunks, by chunk number: it takes them last to first. */
  readonly chunks: readonly { readonly id: number; readonly models: readonly ModelSource[] }[];
  /** Int32 per chunk, 0 free / 1 taken (Atomics.compareExchange). */
  readonly control: SharedArrayBuffer;
}

/** A rendered model without what the main thread already has (its source, tests, macro prefix). */
export type WireOutcome =
  | {
      readonly sql: string;
      readonly pre: readonly string[];
      readonly post: readonly string[];
      /** null: the model's own config object (no config() call changed it). */
      readonly config: ModelConfig | null;
      readonly dependencies: readonly string[];
      readonly template: string;
      readonly lookups: readonly Lookup[];
      readonly logs: LogLines;
      readonly cacheable: boolean;
    }
  | { readonly error: SerializedError; readonly lookups: readonly Lookup[]; readonly logs: LogLines; readonly cacheable: boolean };

/** One chunk's answer: its outcomes in chunk order, or the failure that stopped the worker (the main thread then renders the chunk). */
export type ChunkAnswer = { readonly id: number; readonly threadId: number } & ({ readonly outcomes: readonly WireOutcome[] } | { readonly failure: string });
