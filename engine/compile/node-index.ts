/**
 * Name resolution for templates and rewriting: a node is found by its name,
 * its prod name (`schema.table` / `db.schema.table`) or, for dependency
 * detection, its current full name, all case-insensitively (for ref(),
 * source() and reference rewriting). Built once per compile; lookups are O(1).
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
  private readonly byName = new Map<string, IndexedNode>();
  private readonly byProd = new Map<string, IndexedNode>();
  private readonly byFull = new Map<string, IndexedNode>();
  readonly all: readonly IndexedNode[];

  constructor(nodes: readonly IndexedNode[]) {
    this.all = nodes;
    for (const n of nodes) {
      this.byName.set(n.name.toLowerCase(), n);
      this.byProd.set(n.naming.prodName.toLowerCase(), n);
      this.byFull.set(n.naming.fullName.toLowerCase(), n);
    }
  }

  /** `ref()` / `@name` / rewriting: a node name or prod name. */
  resolve(text: string): IndexedNode | undefined {
    const k = text.toLowerCase();
    return k.includes('.') ? this.byProd.get(k) : this.byName.get(k);
  }

  /** Final dependency detection: a reference equal to a node's current full name. */
  fullNameMatch(text: string): IndexedNode | undefined {
    return this.byFull.get(text.toLowerCase());
  }
}
