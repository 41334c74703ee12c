/**
 * The graph the selector and the scheduler see: nodes in DAG order plus their
 * dependency edges. Names are case-insensitive, so edge
 * maps are keyed by the lower-cased name.
 */

export type NodeKind = 'model' | 'seed' | 'test';

export interface GraphNode {
  /** File stem, original case. */
  readonly name: string;
  readonly kind: NodeKind;
  /** Folder-derived `schema.name` (or `db.schema.name`) ignoring schema overrides. */
  readonly prodName: string;
  /** Current full name in this naming mode (`dev_ann.stg_orders`). */
  readonly fullName: string;
  /** Path relative to the build path, with `/` separators. */
  readonly file: string;
  /** Path relative to the discovery root (models_path / seeds_path in dbt_project mode; else = file). */
  readonly discoveryPath: string;
  /** Effective tags (seeds: none). */
  readonly tags: readonly string[];
  /**
   * Effective configuration for `config.<key>:<value>` selectors: defaults,
   * front-matter and config() merged, `mode` resolved (aliases normalized).
   */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface Graph {
  /** Every enabled node, in DAG order (Kahn, ties by name). */
  readonly nodes: readonly GraphNode[];
  /** lower-cased name -> lower-cased names of the nodes it depends on. */
  readonly deps: ReadonlyMap<string, readonly string[]>;
  /** Lower-cased names of disabled models (not nodes; selecting them exactly is an error). */
  readonly disabled: ReadonlySet<string>;
}

export const key = (name: string): string => name.toLowerCase();
