/**
 * What the compiles of one build directory made, kept in memory for the next
 * compile in this process (the daemon; never written to the cache file): the
 * walk, each model file's loaded form, each model's compiled form, the node
 * index and the DAG. A compile takes these objects as they are for what did
 * not change — files found unchanged by their stat stamps or, given a change
 * journal (engine/files/change-journal.ts), without looking at them — so a
 * recompile after one edit costs the edited file plus passes over the lists
 * that compare objects by identity. Everything here is keyed by what it was
 * made from (the load key, the variant, the objects it was made of), so a
 * compile that fails half-way leaves nothing stale behind.
 */
import type { DiscoveredFile } from '../project/discover.js';
import type { ModelSource, SeedSource } from '../project/load.js';
import type { Level } from '../log.js';
import type { Graph } from '../dag/graph.js';
import type { ChangeView } from '../files/change-journal.js';
import type { CacheEntry, Stamp } from './cache-types.js';
import type { CompiledModel, CompiledNode, CompiledSeed } from './compiled.js';
import type { NodeIndex } from './node-index.js';

export type LogLine = readonly [Level, string];

/** A model file as the last load made it. */
export interface LoadedModel {
  readonly loadKey: string;
  /** Its stat stamp when read (undefined when it was too new to have one). */
  readonly stamp: Stamp | undefined;
  readonly source: ModelSource;
  /** The warnings its load logged: repeated when it is reused. */
  readonly logs: readonly LogLine[];
}

/** A model's compiled form and what it was compiled under. */
export interface CompiledMemo {
  readonly variant: string;
  readonly prefixHash: string;
  /** The node index hash it was checked against. */
  readonly index: string;
  readonly key: string;
  readonly entry: CacheEntry;
  readonly model: CompiledModel;
}

export interface WalkMemo {
  /** The options it was made with (dbt paths, merged children). */
  readonly key: string;
  readonly files: readonly DiscoveredFile[];
  readonly ignored: readonly string[];
  /** The files' absolute paths, made on first need. */
  known?: Set<string>;
}

export interface IndexMemo {
  readonly models: readonly ModelSource[];
  readonly seeds: readonly SeedSource[];
  readonly index: NodeIndex;
  readonly hash: string;
}

export interface GraphMemo {
  readonly models: readonly CompiledModel[];
  readonly seeds: readonly SeedSource[];
  readonly fullRefresh: boolean;
  readonly targetType: string;
  readonly order: readonly string[];
  readonly nodes: readonly CompiledNode[];
  readonly graph: Graph;
  /** Each node's place in `nodes`, by lower-cased name. */
  readonly at: ReadonlyMap<string, number>;
}

/** Where a change journal stood when the last successful compile started, and which journal it was. */
export interface JournalMark {
  readonly journal: ChangeView;
  readonly mark: number;
}

export class CompileMemo {
  walk: WalkMemo | undefined;
  readonly models = new Map<string, LoadedModel>();
  readonly seeds = new Map<string, { readonly loadKey: string; readonly source: SeedSource; readonly logs: readonly LogLine[] }>();
  readonly compiled = new WeakMap<ModelSource, CompiledMemo>();
  /** A model with the catalog name in its naming (DuckDB), per catalog, so it stays the same object. */
  readonly withCatalog = new WeakMap<ModelSource | SeedSource, { readonly catalog: string; readonly source: ModelSource | SeedSource }>();
  index: IndexMemo | undefined;
  graph: GraphMemo | undefined;
  /** Per seed, its node. Per node: its dependencies lower-cased, and its graph node (per --full-refresh). */
  readonly seedNodes = new WeakMap<SeedSource, CompiledSeed>();
  readonly lowerDeps = new WeakMap<CompiledNode, readonly string[]>();
  readonly graphNodes = [new WeakMap<CompiledNode, Graph['nodes'][number]>(), new WeakMap<CompiledNode, Graph['nodes'][number]>()] as const;
  journal: JournalMark | undefined;
}
