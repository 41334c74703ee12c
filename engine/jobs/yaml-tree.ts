/**
 * YAML text → a small positioned tree that the job-file validators walk.
 *
 * The `yaml` library keeps offsets on its nodes but folds duplicate keys,
 * resolves aliases lazily and only when converting to JS; validators need
 * every key with its position, duplicates reported where they occur, and
 * aliases already resolved. So the document is converted once here:
 * duplicates are reported (and the first value kept), aliases are expanded
 * into copies (offsets stay those of the anchored node), and a budget on
 * expanded nodes stops "billion laughs" documents before they cost memory.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import { ProblemList, lineIndex, type LinePos, type PathSeg, type Problem } from './problem.js';

export interface YScalar {
  readonly kind: 'scalar';
  readonly value: string | number | boolean | null;
  readonly offset: number;
  /** True for a key with nothing after its colon (`public.*:`). */
  readonly empty: boolean;
}

export interface YEntry {
  readonly key: string;
  readonly keyOffset: number;
  readonly value: YNode;
}

export interface YMap {
  readonly kind: 'map';
  readonly entries: readonly YEntry[];
  readonly offset: number;
}

export interface YSeq {
  readonly kind: 'seq';
  readonly items: readonly YNode[];
  readonly offset: number;
}

export type YNode = YScalar | YMap | YSeq;

export interface ParsedYaml {
  /** Syntax errors, each with path `""`; when non-empty nothing else is meaningful. */
  readonly syntaxProblems: readonly Problem[];
  readonly documentCount: number;
  /** Offset of the second document's start, when there is one. */
  readonly secondDocumentOffset?: number;
  /** The first document's content (undefined for an empty stream). */
  readonly root?: YNode;
  /** Duplicate keys, unresolved aliases and expansion limits of the first document. */
  readonly structureProblems: ProblemList;
  readonly lineOf: (offset: number) => LinePos;
}

/** Nodes an alias-expanded document may hold; far above any real job file. */
const MAX_EXPANDED_NODES = 100_000;
/**
 * Nodes aliases may add by expansion: real job files reuse a few anchored
 * blocks; a "billion laughs" document hits this long before the total above
 * (whose expansion alone held the event loop for a second).
 */
export const MAX_ALIAS_NODES = 10_000;

function keyText(key: unknown): string {
  if (isScalar(key)) return key.value === null ? (key.source ?? '') : String(key.value);
  if (key === null || key === undefined) return '';
  return String(key);
}

function nodeOffset(node: unknown, fallback: number): number {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? range[0] : fallback;
}

/** Deepest nesting of mappings and sequences a job file may have (real ones use fewer than 10). */
export const MAX_YAML_DEPTH = 100;

class Converter {
  private nodes = 0;
  private aliasNodes = 0;
  private overBudget = false;
  private tooDeep = false;
  private readonly expanding = new Set<Node>();

  constructor(
    private readonly doc: Document,
    private readonly problems: ProblemList,
  ) {}

  convert(node: unknown, path: PathSeg[], fallback: number): YNode {
    this.nodes++;
    if (this.expanding.size > 0) this.aliasNodes++;
    if (this.nodes > MAX_EXPANDED_NODES || this.aliasNodes > MAX_ALIAS_NODES) {
      const message = this.aliasNodes > MAX_ALIAS_NODES ? `YAML aliases add more than ${MAX_ALIAS_NODES} nodes (the limit for alias expansion)` : `YAML aliases expand to more than ${MAX_EXPANDED_NODES} nodes`;
      if (!this.overBudget) this.problems.add('', message, 0);
      this.overBudget = true;
      return { kind: 'scalar', value: null, offset: fallback, empty: true };
    }
    if (isAlias(node)) return this.alias(node, path, fallback);
    if ((isMap(node) || isSeq(node)) && path.length >= MAX_YAML_DEPTH) {
      if (!this.tooDeep) this.problems.add('', `YAML nesting is too deep (more than ${MAX_YAML_DEPTH} levels of mappings and sequences)`, nodeOffset(node, fallback));
      this.tooDeep = true;
      return { kind: 'scalar', value: null, offset: fallback, empty: true };
    }
    if (isMap(node)) {
      const entries: YEntry[] = [];
      const seen = new Set<string>();
      const offset = nodeOffset(node, fallback);
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = keyText(isAlias(pair.key) ? pair.key.resolve(this.doc) : pair.key);
        const keyOffset = nodeOffset(pair.key, offset);
        if (seen.has(key)) {
          this.problems.add([...path, key], `duplicate key ${JSON.stringify(key)}`, keyOffset);
          continue;
        }
        seen.add(key);
        entries.push({ key, keyOffset, value: this.convert(pair.value, [...path, key], keyOffset) });
      }
      return { kind: 'map', entries, offset };
    }
    if (isSeq(node)) {
      const offset = nodeOffset(node, fallback);
      return { kind: 'seq', items: node.items.map((item, i) => this.convert(item, [...path, i], offset)), offset };
    }
    if (isScalar(node)) {
      const v = node.value;
      const value = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : v === null || v === undefined ? null : String(v);
      const empty = value === null && (node.source ?? '') === '' && node.range?.[0] === node.range?.[1];
      return { kind: 'scalar', value, offset: empty ? fallback : nodeOffset(node, fallback), empty };
    }
    return { kind: 'scalar', value: null, offset: fallback, empty: true };
  }

  private alias(node: { source: string; resolve(doc: Document): unknown }, path: PathSeg[], fallback: number): YNode {
    const offset = nodeOffset(node, fallback);
    const target = node.resolve(this.doc) as Node | undefined;
    if (target === undefined) {
      this.problems.add(path, `unresolved alias *${node.source}`, offset);
      return { kind: 'scalar', value: null, offset, empty: false };
    }
    if (this.expanding.has(target)) {
      this.problems.add(path, `alias *${node.source} refers to a node that contains it`, offset);
      return { kind: 'scalar', value: null, offset, empty: false };
    }
    this.expanding.add(target);
    try {
      return this.convert(target, path, offset);
    } finally {
      this.expanding.delete(target);
    }
  }
}

export function parseYaml(text: string): ParsedYaml {
  const lineOf = lineIndex(text);
  const structureProblems = new ProblemList(lineOf);
  const docs = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false, version: '1.2', merge: false });
  const syntax = new ProblemList(lineOf);
  for (const doc of docs) {
    for (const err of doc.errors) {
      const text = err.message.split('\n')[0]!.replace(/:\s*$/, '');
      // The parser itself recurses per level: past a few thousand levels it runs out of stack.
      syntax.add('', /Maximum call stack size exceeded/.test(text) ? `YAML nesting is too deep (more than ${MAX_YAML_DEPTH} levels of mappings and sequences)` : text, err.pos[0]);
    }
  }
  const base = { documentCount: docs.length, structureProblems, lineOf };
  if (syntax.size > 0) return { ...base, syntaxProblems: syntax.list() };
  const first = docs[0];
  const second = docs[1];
  const root = first === undefined ? undefined : new Converter(first, structureProblems).convert(first.contents, [], 0);
  return {
    ...base,
    syntaxProblems: [],
    ...(root === undefined ? {} : { root }),
    ...(second === undefined ? {} : { secondDocumentOffset: nodeOffset(second, text.length) }),
  };
}

/** Top-level keys of a text's first document, or undefined when it is not a mapping; for classification. */
export function topLevelKeys(root: YNode | undefined): Set<string> | undefined {
  if (root === undefined || root.kind !== 'map') return undefined;
  return new Set(root.entries.map((e) => e.key));
}

/** The JS value of a node (for free-form maps such as `vars` and `payload`). */
export function plainValue(node: YNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') return node.items.map(plainValue);
  const out: Record<string, unknown> = {};
  for (const e of node.entries) {
    Object.defineProperty(out, e.key, { value: plainValue(e.value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
