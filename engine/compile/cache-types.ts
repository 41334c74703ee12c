/**
 * The compile cache's data types (compile-cache.ts keeps and stores them,
 * cache-file.ts encodes them, compile-memo.ts and the renderers use them),
 * apart from the code so those modules do not import one another for types.
 */
import type { Level } from '../log.js';
import type { BuildConfig } from '../project/config.js';
import type { DiscoveredFile } from '../project/discover.js';
import type { ModelConfig } from '../project/model-config.js';

/** One recorded lookup: kind (`r` resolve, `f` full-name match, `e` env var), the query, the answer's signature or null. */
export type Lookup = readonly [kind: 'r' | 'f' | 'e', query: string, answer: string | null];

export interface CacheEntry {
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  /** null: the model's own config (no config() call changed it). */
  readonly config: ModelConfig | null;
  readonly dependencies: readonly string[];
  /** null: the model's body as loaded (no `@name` or config block to replace). */
  readonly template: string | null;
  readonly lookups: readonly Lookup[];
  /** Whether any lookup is an env var (`e`): those are checked on every use, node lookups only when a node changed. */
  readonly readsEnv: boolean;
  readonly logs: readonly (readonly [Level, string])[];
}

/** A file's stat stamp (statStamp): compared as numbers, never formatted (10,000 stamps as strings cost ≈20 ms). */
export type Stamp = readonly [mtimeMs: number, ctimeMs: number, size: number, ino: number];

/** A model file read and split before: its front-matter mapping (or null) and body, valid while its stat stamp holds. */
export type SourceEntry = readonly [stamp: Stamp, config: Record<string, unknown> | null, body: string];

/** What one compile of a build directory was, so the next compile of the same variant can take unchanged files' entries as they are. */
export interface LastCompile {
  /** Hash of everything the whole compile depends on besides the model files (compile.ts). */
  readonly variant: string;
  /** Model file (absolute) → the key of the entry its model used. */
  readonly entries: ReadonlyMap<string, string>;
  /** Discovery folder → hash of the macro text in scope there. */
  readonly prefixes: ReadonlyMap<string, string>;
  /** Hash of every node's name, kind, file and naming: what `ref()` and table references resolve against. */
  readonly index: string;
  /** The nodes' names in DAG order. */
  readonly order?: readonly string[];
}

/** Entries by key: a Map, or the lazily decoded table of a cache file. */
export interface EntryMap {
  get(key: string): CacheEntry | undefined;
  has(key: string): boolean;
  keys(): Iterable<string>;
  readonly size: number;
}

/** A config file parsed before: the config and the warnings its parse logged. */
export interface ParsedConfig {
  readonly config: BuildConfig;
  readonly logs: readonly (readonly [Level, string])[];
}

/** A walk of a build directory (project/discover.ts) and what it depends on. */
export interface StoredWalk {
  /** The options it was made with (dbt paths, merged children). */
  readonly key: string;
  readonly files: readonly DiscoveredFile[];
  readonly ignored: readonly string[];
  /** Every directory it listed and its stat stamp just before; undefined: one could not be stamped (too new, a link). */
  readonly dirs: readonly (readonly [abs: string, stamp: Stamp])[] | undefined;
}

/** The entries of one build directory, and what this process last read or wrote to its file. */
export interface Store {
  /** The last compile's walk, when its directories could be stamped. */
  readonly walk?: StoredWalk;
  readonly models: EntryMap;
  readonly sources: ReadonlyMap<string, SourceEntry>;
  /** Config files by what their parse read (engine/project/config.ts ConfigMemo). */
  readonly configs: ReadonlyMap<string, ParsedConfig>;
  readonly last: LastCompile | undefined;
  /** `mtimeMs:size` of the file when it was read or written; another value means someone else wrote it. */
  readonly fileStamp: string | undefined;
}
