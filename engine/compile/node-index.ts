/**
 * Name resolution for templates and rewriting: a node is found by its name,
 * its prod name (`schema.table` / `db.schema.table`) or, for dependency
 * detection, its current full name, all case-insensitively (for ref(),
 * source() and reference rewriting). Its maps are built on the first lookup; lookups are O(1).
 */
import type { NodeName } from '../project/naming.js';

export interface IndexedNode {
  readonly name: string;
  readonly kind: 'model' | 'seed';
  readonly file: string;
  readonly naming: NodeName;
}

/** What a render may ask of the nodes (NodeIndex, or a cache's recording view of it). */
export interface NodeLookup {
  readonly all: readonly IndexedNode[];
  resolve(text: string): IndexedNode | undefined;
  fullNameMatch(text: string): IndexedNode | undefined;
}

export class NodeIndex implements NodeLookup {
  #maps: { byName: Map<string, IndexedNode>; byProd: Map<string, IndexedNode>; byFull: Map<string, IndexedNode> } | undefined;
  readonly all: readonly IndexedNode[];

  constructor(nodes: readonly IndexedNode[]) {
    this.all = nodes;
  }

  /** Built on the first lookup: a compile that takes every model from the cache asks none. */
  #lookup() {
    if (this.#maps === undefined) {
      const maps = { byName: new Map<string, IndexedNode>(), byProd: new Map<string, IndexedNode>(), byFull: new Map<string, IndexedNode>() };
      for (const n of this.all) {
        maps.byName.set(n.name.toLowerCase(), n);
        maps.byProd.set(n.naming.prodName.toLowerCase(), n);
        maps.byFull.set(n.naming.fullName.toLowerCase(), n);
      }
      this.#maps = maps;
    }
    return this.#maps;
  }

  /** `ref()` / `@name` / rewriting: a node name or prod name. */
  resolve(text: string): IndexedNode | undefined {
    const k = text.toLowerCase();
    const maps = this.#lookup();
    return k.includes('.') ? maps.byProd.get(k) : maps.byName.get(k);
  }

  /** Final dependency detection: a reference equal to a node's current full name. */
  fullNameMatch(text: string): IndexedNode | undefined {
    return this.#lookup().byFull.get(text.toLowerCase());
  }
}
