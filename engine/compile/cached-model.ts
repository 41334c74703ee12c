/**
 * A model through the compile cache (compile-cache.ts): taken as it is from
 * this process's last compile (the same loaded object, compile-memo.ts), or
 * from the cache's entry for its file when the file is unchanged since the
 * cache's last compile of this variant, or from the entry for the hash of its
 * inputs — each only while every lookup the render made still answers the
 * same — else rendered (parallel-render.ts) and recorded.
 */
import { lookupVar } from '../home-env.js';
import type { ModelSource, Project } from '../project/load.js';
import type { CacheSession } from './cache-session.js';
import { compilerCodeStamp, entryKey, hashText, type CacheEntry, type LastCompile, type Lookup } from './compile-cache.js';
import type { CompiledModel } from './compiled.js';
import type { CompiledMemo, CompileMemo } from './compile-memo.js';
import type { RenderWorkers } from './parallel-render.js';
import { signatureOf, type RenderOutcome } from './recorded-render.js';
import type { Renderer } from './renderer.js';
import type { RenderEnv } from './render-model.js';
import { dirOf } from './macros.js';

export interface ModelCache {
  readonly session: CacheSession;
  /** This process's compiled objects (memory caches only). */
  readonly memo: CompileMemo | undefined;
  /** Target and project-wide inputs, code stamp: part of every entry's key. */
  readonly globalKey: string;
  /** The global key and everything a model's loaded form depends on besides its file (LastCompile.variant). */
  readonly variant: string;
  /** Hash of every node's identity (LastCompile.index). */
  readonly index: string;
  /** The cache's last compile, when it was of this variant. */
  readonly last: LastCompile | undefined;
  /** The last compile's nodes were these: an entry's node lookups need no check. */
  readonly sameIndex: boolean;
  /** Macro prefix text → its hash. */
  readonly prefixHashes: Map<string, string>;
  /** This compile, for the next one (LastCompile). */
  readonly entries: Map<string, string>;
  readonly prefixes: Map<string, string>;
  /** Names of the models rendered (not taken from the cache), in project order. */
  readonly rendered: string[];
}

/** The cache's view of one compile; `index`: the hash of the node index (compile.ts nodeIndex). */
export function modelCache(session: CacheSession, env: RenderEnv, opts: { readonly catalog?: string }, project: Project, index: string): ModelCache {
  const globalKey = JSON.stringify([compilerCodeStamp(), env.target, opts.catalog ?? null, env.vars]);
  const variant = hashText(`${globalKey}\u0000${project.loadKey ?? ''}`);
  const last = session.lastCompile(variant);
  return { session, memo: session.memo, globalKey, variant, index, last, sameIndex: last?.index === index, prefixHashes: new Map(), entries: new Map(), prefixes: new Map(), rendered: [] };
}

/** Whether every lookup the entry's render made still gets the same answer; `nodes`: check node lookups too, not only env vars. */
function stillValid(env: RenderEnv, e: CacheEntry, nodes = true): boolean {
  if (!nodes && !e.readsEnv) return true;
  for (const [kind, query, answer] of e.lookups) {
    if (kind !== 'e' && !nodes) continue;
    const now = kind === 'r' ? signatureOf(env.index.resolve(query)) : kind === 'f' ? signatureOf(env.index.fullNameMatch(query)) : (lookupVar(query, env.stepEnv) ?? null);
    if (now !== answer) return false;
  }
  return true;
}

function fromEntry(m: ModelSource, hit: CacheEntry, prefix: string): CompiledModel {
  return { kind: 'model', name: m.name, source: m, config: hit.config ?? m.config, tests: m.tests, sql: hit.sql, pre: hit.pre, post: hit.post, dependencies: hit.dependencies, template: hit.template ?? m.body, templatePrefix: prefix };
}

/** How the cache answers for one model: this process's compiled object, an entry, or a render (under `key`). */
type CacheAnswer =
  | { readonly kind: 'memo'; readonly memo: CompiledMemo }
  | { readonly kind: 'entry'; readonly key: string; readonly entry: CacheEntry; readonly prefix: string; readonly prefixHash: string }
  | { readonly kind: 'render'; readonly key: string; readonly prefixHash: string };

/**
 * Every model compiled: taken from the cache where it can be (compile-cache.ts), the
 * rest rendered — on render workers too when there are many (parallel-render.ts) —
 * then, in project order, each model's warnings logged and the first failure thrown,
 * as a model-by-model compile would.
 */
export function compileModels(env: RenderEnv, models: readonly ModelSource[], cache: ModelCache | undefined, renderer: () => Renderer, workers?: RenderWorkers): CompiledModel[] {
  const found = cache ? models.map((m) => lookUp(env, m, cache)) : undefined;
  const misses = found ? models.filter((_, i) => found[i]!.kind === 'render') : models;
  if (misses.length === 0) workers?.stop();
  const rendered = misses.length === 0 ? [] : renderer().renderModels(env, misses, env.logger, workers);
  let next = 0;
  return models.map((m, i) => {
    const f = found?.[i];
    if (f?.kind === 'memo') return keepMemo(env, m, cache!, f.memo);
    if (f?.kind === 'entry') return reuse(env, m, cache!, f.key, f.entry, f.prefix, f.prefixHash);
    const o = rendered[next++]!;
    for (const [level, message] of o.logs) env.logger.log(level, message);
    if (o.model === undefined) throw o.error;
    if (f !== undefined) record(m, o, cache!, f.key, f.prefixHash);
    return o.model;
  });
}

/** Where the cache has `m`; no side effects (compileModels applies them in project order). */
function lookUp(env: RenderEnv, m: ModelSource, cache: ModelCache): CacheAnswer {
  const dir = dirOf(m.rel);
  const prefix = env.macros.prefixFor(dir);
  let prefixHash = cache.prefixHashes.get(prefix);
  if (prefixHash === undefined) {
    prefixHash = hashText(prefix);
    cache.prefixHashes.set(prefix, prefixHash);
  }
  cache.prefixes.set(dir, prefixHash);
  // This process compiled this very object before (the daemon): the same compiled object.
  const mine = cache.memo?.compiled.get(m);
  if (mine !== undefined && mine.variant === cache.variant && mine.prefixHash === prefixHash && stillValid(env, mine.entry, mine.index !== cache.index)) return { kind: 'memo', memo: mine };
  const last = cache.last;
  // A file unchanged since the cache's last compile of this variant: that compile's entry, without hashing the inputs.
  if (last !== undefined && cache.session.isUnchanged(m.abs) && last.prefixes.get(dir) === prefixHash) {
    const key = last.entries.get(m.abs);
    const hit = key === undefined ? undefined : cache.session.model(key);
    if (hit !== undefined && stillValid(env, hit, !cache.sameIndex)) return { kind: 'entry', key: key!, entry: hit, prefix, prefixHash };
  }
  const key = entryKey(`${cache.globalKey}\u0000${prefixHash}\u0000${JSON.stringify([m.name, m.rel, m.body, m.config, m.hasFrontMatter, m.naming, m.tests, m.vars ?? null])}`);
  const hit = cache.session.model(key);
  if (hit !== undefined && stillValid(env, hit)) return { kind: 'entry', key, entry: hit, prefix, prefixHash };
  return { kind: 'render', key, prefixHash };
}

function keepMemo(env: RenderEnv, m: ModelSource, cache: ModelCache, mine: CompiledMemo): CompiledModel {
  keep(env, m, cache, mine.key, mine.entry);
  if (mine.index !== cache.index) cache.memo!.compiled.set(m, { ...mine, index: cache.index });
  return mine.model;
}

/** A rendered model kept for the next compile (unless its render listed every node). */
function record(m: ModelSource, o: RenderOutcome, cache: ModelCache, key: string, prefixHash: string): void {
  const c = o.model!;
  cache.rendered.push(m.name);
  if (!o.cacheable) return;
  const sameConfig = c.config === m.config || JSON.stringify(c.config) === JSON.stringify(m.config);
  const entry: CacheEntry = { sql: c.sql, pre: c.pre, post: c.post, config: sameConfig ? null : c.config, dependencies: c.dependencies, template: c.template === m.body ? null : c.template, lookups: dedupe(o.lookups), readsEnv: o.lookups.some((l) => l[0] === 'e'), logs: o.logs };
  cache.session.keepModel(key, entry, true);
  cache.entries.set(m.abs, key);
  cache.memo?.compiled.set(m, { variant: cache.variant, prefixHash, index: cache.index, key, entry, model: c });
}

/** An entry's warnings logged again, and the entry kept for the next compile. */
function keep(env: RenderEnv, m: ModelSource, cache: ModelCache, key: string, hit: CacheEntry): void {
  for (const [level, message] of hit.logs) env.logger.log(level, message);
  cache.session.keepModel(key, hit, false);
  cache.entries.set(m.abs, key);
}

function reuse(env: RenderEnv, m: ModelSource, cache: ModelCache, key: string, hit: CacheEntry, prefix: string, prefixHash: string): CompiledModel {
  keep(env, m, cache, key, hit);
  const model = fromEntry(m, hit, prefix);
  cache.memo?.compiled.set(m, { variant: cache.variant, prefixHash, index: cache.index, key, entry: hit, model });
  return model;
}

/**
 * The last compile's DAG order when this compile has the same nodes and every
 * model the same entry (so the same dependencies and enabled flags): the
 * order is a function of those alone.
 */
export function lastOrder(cache: ModelCache, project: Project): readonly string[] | undefined {
  const last = cache.last;
  if (last?.order === undefined || !cache.sameIndex || cache.entries.size !== project.models.length || last.entries.size !== cache.entries.size) return undefined;
  for (const [abs, key] of cache.entries) if (last.entries.get(abs) !== key) return undefined;
  return last.order;
}

/** Ends the cache's part of a compile that produced `order`. */
export function recordCompile(cache: ModelCache, order: readonly string[]): void {
  // The same order from the last compile means the same variant, nodes and entries; with the same macros it is the same compile.
  const same = cache.last !== undefined && order === cache.last.order && sameMap(cache.prefixes, cache.last.prefixes);
  cache.session.recordCompile(same ? cache.last! : { variant: cache.variant, entries: cache.entries, prefixes: cache.prefixes, index: cache.index, order });
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function dedupe(lookups: readonly Lookup[]): Lookup[] {
  const seen = new Set<string>();
  return lookups.filter((l) => {
    const k = `${l[0]}\u0000${l[1]}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
