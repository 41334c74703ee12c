/**
 * The compile cache: what rendering a model produced (SQL, pre/post
 * statements, effective config, dependencies, warnings), keyed by a hash of
 * everything the render reads that is known up front — the model's text,
 * front-matter config, name, path, naming, tests and vars, the macro text in
 * its scope, the target (name, type, dev/prod schema, catalog) and a stamp of
 * the compiler's own code. What the render looks up while it runs is
 * recorded with the answer it got — every `ref()`/`@name`/table-reference
 * lookup of another node (found or not) and every `env_var()` — and the entry
 * is used only while every recorded lookup still gives the same answer. So a
 * renamed, added or removed model invalidates exactly the models that named
 * it, and an unchanged project renders nothing.
 *
 * Model files are checked like git checks its index: a file whose stat stamp
 * (compile-session.ts) is unchanged is not read again. The cache also keeps
 * what the last compile of the directory was (its *variant*: code, config,
 * flags and target; per model file the entry it used; per folder the hash of
 * the macros in scope; a hash of every node's name and naming), so a compile
 * of the same variant takes an unchanged file's entry without hashing its
 * inputs, and checks the entry's node lookups only when some node changed.
 *
 * Entries live in memory for the life of the process (the daemon compiles a
 * project again without reading any cache file) and, for command-line builds,
 * in `<build dir>/.service/compile-cache` (a `.gitignore` beside it ignores the
 * folder), one JSON document — JSON.parse read the 10,000-model cache ≈2× as
 * fast as v8.deserialize. The file carries a SHA-256 of its body: a truncated,
 * edited or otherwise corrupt file is ignored and the project compiles in
 * full. Only successful renders are cached; a model that fails renders again
 * every time so its error is always the current one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Level, Logger } from '../log.js';
import { configFromJson, configToJson, type BuildConfig } from '../project/config.js';
import { discoveredFile, type DiscoveredFile } from '../project/discover.js';
import type { ModelConfig } from '../project/model-config.js';
import { CompileMemo } from './compile-memo.js';
import type { IndexedNode } from './node-index.js';

const FORMAT = 'service-compile-cache 5';
export const CACHE_DIR_NAME = '.service';
export const CACHE_FILE_NAME = 'compile-cache';

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

/** A node's identity as far as a render that found it can tell: its name, kind and every name form. */
export function nodeSignature(n: IndexedNode): string {
  let sig = signatures.get(n);
  if (sig === undefined) {
    const m = n.naming;
    sig = `${n.name}\u0001${n.kind}\u0001${m.database ?? ''}\u0001${m.schema}\u0001${m.name}\u0001${m.prodName}\u0001${m.fullName}`;
    signatures.set(n, sig);
  }
  return sig;
}

/** Index nodes are immutable and looked up by many models: one signature each. */
const signatures = new WeakMap<IndexedNode, string>();

export const hashText = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** An entry key: 128 bits of the inputs' hash are plenty to tell entries apart and keep the file small. */
export const entryKey = (text: string): string => hashText(text).slice(0, 22);

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

const stores = new Map<string, Store>();
const memos = new Map<string, CompileMemo>();

/** The in-memory objects of the compiles of `root` in this process (compile-memo.ts). */
export function memoOf(root: string): CompileMemo {
  let memo = memos.get(root);
  if (memo === undefined) {
    memo = new CompileMemo();
    memos.set(root, memo);
  }
  return memo;
}

export interface CacheLocation {
  /** The key of the in-memory store (the build directory). */
  readonly root: string;
  /** Where the file lives; undefined: memory only. */
  readonly dir?: string;
}

function fileStampOf(file: string): string | undefined {
  try {
    const st = statSync(file);
    return `${st.mtimeMs}:${st.size}`;
  } catch {
    return undefined;
  }
}

/**
 * A file's stat stamp, like git's index: modification and change times,
 * size and inode. A file modified within the last two seconds gets none
 * (its next write could keep the same times): it is read every time until
 * it has been quiet for a while.
 */
export function statStamp(abs: string, now: number): Stamp | undefined {
  const st = trustedStat(abs, now);
  return st === undefined ? undefined : [st.mtimeMs, st.ctimeMs, st.size, st.ino];
}

/** Whether the file at `abs` has the stat stamp `stamp` (and is old enough to be trusted by it). */
export function hasStamp(abs: string, now: number, stamp: Stamp): boolean {
  const st = trustedStat(abs, now);
  return st !== undefined && st.mtimeMs === stamp[0] && st.ctimeMs === stamp[1] && st.size === stamp[2] && st.ino === stamp[3];
}

function trustedStat(abs: string, now: number): { mtimeMs: number; ctimeMs: number; size: number; ino: number } | undefined {
  const st = statSync(abs, { throwIfNoEntry: false });
  return st === undefined || now - st.mtimeMs < 2000 || now - st.ctimeMs < 2000 ? undefined : st;
}

const empty = (): Store => ({ models: new Map(), sources: new Map(), configs: new Map(), last: undefined, fileStamp: undefined });

/**
 * The store of a build directory: the in-memory one when the file has not
 * changed since this process read or wrote it, else the file's (nothing
 * when it is missing or corrupt — then the compile is a full one).
 */
export function openStore(loc: CacheLocation, logger: Logger): Store {
  const mem = stores.get(loc.root);
  if (loc.dir === undefined) return mem ?? empty();
  const file = join(loc.dir, CACHE_FILE_NAME);
  const stamp = fileStampOf(file);
  if (mem && mem.fileStamp === stamp) return mem;
  if (stamp === undefined) return mem ?? empty();
  const read = readCacheFile(file, logger);
  return read ? { ...read, fileStamp: stamp } : empty();
}

/** Keeps `store` as the directory's in-memory store and, with a directory, writes it to the file. */
export function saveStore(loc: CacheLocation, store: Store, logger: Logger): void {
  if (loc.dir === undefined) {
    stores.set(loc.root, store);
    return;
  }
  const file = join(loc.dir, CACHE_FILE_NAME);
  try {
    mkdirSync(loc.dir, { recursive: true });
    // The folder holds only generated files: git (and tools that read .gitignore) skip it.
    const ignore = join(loc.dir, '.gitignore');
    if (fileStampOf(ignore) === undefined) writeFileSync(ignore, '# generated by service: safe to delete\n*\n');
    const [entries, lookups] = pack(loc.root, store);
    const text = `${JSON.stringify(entries)}\n${JSON.stringify(lookups)}`;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${FORMAT} ${hashText(text)}\n${text}`);
    renameSync(tmp, file);
    stores.set(loc.root, { ...store, fileStamp: fileStampOf(file) });
  } catch (err) {
    // A read-only project still builds: the cache stays in memory for this process.
    logger.log('debug', `compile cache not written to ${file}: ${(err as Error).message}`);
    stores.set(loc.root, { ...store, fileStamp: undefined });
  }
}

/** Keeps `store` in memory only, as the file's content (nothing to write: the file already holds it). */
export function keepStore(loc: CacheLocation, store: Store): void {
  stores.set(loc.root, store);
}

/**
 * The file's body: one column per field, so JSON.parse makes a few large
 * arrays instead of several small objects per model (a warm compile reads
 * this file before anything else; lookups and logs are decoded only for the
 * entries that need them). Repeated values are written once and referenced
 * by index: lookup answers (node signatures) in `a`, configs in `c`. Paths
 * are relative to the build directory.
 */
interface FileBody {
  /** Config objects (front-matter mappings and effective configs). */
  readonly c: readonly unknown[];
  /** Entries: key, sql, pre and post statements (0: none), effective config index (-1: the model's own). */
  readonly k: readonly string[];
  readonly q: readonly string[];
  readonly b: readonly (readonly string[] | 0)[];
  readonly o: readonly (readonly string[] | 0)[];
  readonly g: readonly number[];
  /** Entries: dependency count, then all dependencies in a row; template (0: the body). */
  readonly dn: readonly number[];
  readonly d: readonly string[];
  readonly t: readonly (string | 0)[];
  /** Entries with an env var lookup (checked on every use). */
  readonly ev: readonly number[];
  /** Entry index → its logs, for the few entries with any. */
  readonly w: Readonly<Record<string, readonly (readonly [Level, string])[]>>;
  /** Model files: path, stat stamp (mtime, ctime, size, inode), front-matter config index (-1: none), body, and the entry index the last compile used (-1: none). */
  readonly sp: readonly string[];
  readonly sm: readonly number[];
  readonly sc: readonly number[];
  readonly ss: readonly number[];
  readonly si: readonly number[];
  readonly sf: readonly number[];
  readonly sb: readonly string[];
  readonly se: readonly number[];
  /** Config files: key, config, logs. */
  readonly cf?: readonly (readonly [string, unknown, readonly (readonly [Level, string])[]])[];
  /**
   * The walk: its key, its directories (path, stat stamp), its files (path;
   * discovery path and absolute path, each 0 when it is the path; index →
   * sub-project) and the ignored files it named.
   */
  readonly wk?: string;
  readonly wd?: readonly string[];
  readonly wm?: readonly number[];
  readonly wc?: readonly number[];
  readonly ws?: readonly number[];
  readonly wi?: readonly number[];
  readonly wf?: readonly string[];
  readonly wr?: readonly (string | 0)[];
  readonly wa?: readonly (string | 0)[];
  readonly wp?: Readonly<Record<string, string>>;
  readonly wg?: readonly string[];
  /** The last compile: variant, index hash, macro prefix hash per folder, DAG order. */
  readonly l: { readonly v: string; readonly i: string; readonly p: Readonly<Record<string, string>>; readonly o?: readonly string[] } | null;
}

/**
 * The file's second part: every entry's lookups, parsed only when one is
 * checked (a node was added, removed or renamed) or the file is written —
 * a third of the file a warm compile never reads.
 */
interface LookupBody {
  /** Node signatures. */
  readonly a: readonly string[];
  /** Entries: lookup count, then all lookups in a row — kind and query, answer index (-1: none). */
  readonly ln: readonly number[];
  readonly lq: readonly string[];
  readonly la: readonly number[];
}

function interner<T>(keyOf: (v: T) => string): { readonly list: T[]; indexOf(v: T): number } {
  const list: T[] = [];
  const at = new Map<string, number>();
  // Most values are shared objects (one front-matter value per distinct text): found by identity before keyOf runs.
  const seen = new Map<T, number>();
  return {
    list,
    indexOf(v) {
      const object = typeof v === 'object' && v !== null;
      let i = object ? seen.get(v) : undefined;
      if (i !== undefined) return i;
      const k = keyOf(v);
      i = at.get(k);
      if (i === undefined) {
        i = list.push(v) - 1;
        at.set(k, i);
      }
      if (object) seen.set(v, i);
      return i;
    },
  };
}

const relTo = (root: string, abs: string) => (abs.startsWith(`${root}/`) ? abs.slice(root.length + 1) : abs);
const absFrom = (root: string, rel: string) => (rel.startsWith('/') ? rel : `${root}/${rel}`);

function pack(root: string, store: Store): [FileBody, LookupBody] {
  const answers = interner<string>((x) => x);
  const configs = interner<unknown>((x) => JSON.stringify(x));
  const body = { c: configs.list, k: [] as string[], q: [] as string[], b: [] as (readonly string[] | 0)[], o: [] as (readonly string[] | 0)[], g: [] as number[] };
  const ev: number[] = [];
  const dn: number[] = [];
  const d: string[] = [];
  const t: (string | 0)[] = [];
  const ln: number[] = [];
  const lq: string[] = [];
  const la: number[] = [];
  const w: Record<string, readonly (readonly [Level, string])[]> = {};
  const at = new Map<string, number>();
  for (const key of store.models.keys()) {
    const e = store.models.get(key)!;
    at.set(key, body.k.length);
    if (e.logs.length > 0) w[body.k.length] = e.logs;
    body.k.push(key);
    body.q.push(e.sql);
    body.b.push(e.pre.length === 0 ? 0 : e.pre);
    body.o.push(e.post.length === 0 ? 0 : e.post);
    body.g.push(e.config === null ? -1 : configs.indexOf(e.config));
    dn.push(e.dependencies.length);
    d.push(...e.dependencies);
    t.push(e.template ?? 0);
    if (e.readsEnv) ev.push(body.k.length - 1);
    ln.push(e.lookups.length);
    for (const [kind, q, a] of e.lookups) {
      lq.push(kind + q);
      la.push(a === null ? -1 : answers.indexOf(a));
    }
  }
  const sp: string[] = [];
  const sm: number[] = [];
  const sc: number[] = [];
  const ss: number[] = [];
  const si: number[] = [];
  const sf: number[] = [];
  const sb: string[] = [];
  const se: number[] = [];
  for (const [abs, [stamp, config, text]] of store.sources) {
    sp.push(relTo(root, abs));
    sm.push(stamp[0]);
    sc.push(stamp[1]);
    ss.push(stamp[2]);
    si.push(stamp[3]);
    sf.push(config === null ? -1 : configs.indexOf(config));
    sb.push(text);
    const key = store.last?.entries.get(abs);
    se.push(key === undefined ? -1 : (at.get(key) ?? -1));
  }
  const last = store.last;
  const cf = [...store.configs].map(([key, p]) => [key, configToJson(p.config), p.logs] as const);
  const walk = store.walk?.dirs === undefined ? undefined : packWalk(root, store.walk, store.walk.dirs);
  return [{ ...body, dn, d, t, ev, w, sp, sm, sc, ss, si, sf, sb, se, cf, ...walk, l: last ? { v: last.variant, i: last.index, p: Object.fromEntries(last.prefixes), ...(last.order ? { o: last.order } : {}) } : null }, { a: answers.list, ln, lq, la }];
}

function packWalk(root: string, walk: StoredWalk, dirs: NonNullable<StoredWalk['dirs']>): Partial<FileBody> {
  const wp: Record<string, string> = {};
  walk.files.forEach((f, i) => {
    if (f.subProject !== undefined) wp[i] = f.subProject;
  });
  return {
    wk: walk.key,
    wd: dirs.map(([abs]) => relTo(root, abs)),
    wm: dirs.map(([, s]) => s[0]),
    wc: dirs.map(([, s]) => s[1]),
    ws: dirs.map(([, s]) => s[2]),
    wi: dirs.map(([, s]) => s[3]),
    wf: walk.files.map((f) => f.file),
    wr: walk.files.map((f) => (f.rel === f.file ? 0 : f.rel)),
    wa: walk.files.map((f) => (relTo(root, f.abs) === f.file ? 0 : relTo(root, f.abs))),
    wp,
    wg: [...walk.ignored],
  };
}

function unpackWalk(root: string, b: FileBody): StoredWalk | undefined {
  if (b.wk === undefined) return undefined;
  const { wd, wm, wc, ws, wi, wf, wr, wa, wp, wg } = b;
  if (!wd || !wm || !wc || !ws || !wi || !wf || !wr || !wa || !wg || typeof wp !== 'object' || wp === null) throw new Error('bad walk');
  if ([wm, wc, ws, wi].some((col) => col.length !== wd.length) || wr.length !== wf.length || wa.length !== wf.length) throw new Error('bad walk columns');
  const files = wf.map((file, i) => {
    const f = discoveredFile(file, wr[i] || file, absFrom(root, wa[i] || file), wp[i]);
    if (f === undefined) throw new Error('bad walk file');
    return f;
  });
  return { key: b.wk, files, ignored: wg, dirs: wd.map((rel, i) => [rel === '' ? root : absFrom(root, rel), [wm[i]!, wc[i]!, ws[i]!, wi[i]!]] as const) };
}

/** The entries of a cache file, each decoded on first use. */
class EntryTable implements EntryMap {
  private readonly at = new Map<string, number>();
  private readonly made: (CacheEntry | undefined)[];
  private readonly depsAt: number[];
  private lookupsAt: number[] = [];
  /** Entries with an env var lookup. */
  private readonly readingEnv = new Set<number>();

  #lookupBody: LookupBody | undefined;

  constructor(
    private readonly body: FileBody,
    private readonly readLookups: () => LookupBody,
  ) {
    const n = body.k.length;
    for (const col of [body.q, body.b, body.o, body.g, body.t, body.dn]) if (!Array.isArray(col) || col.length !== n) throw new Error('bad entry columns');
    if (!Array.isArray(body.c) || !Array.isArray(body.d) || !Array.isArray(body.ev)) throw new Error('bad entry columns');
    body.k.forEach((key, i) => this.at.set(key, i));
    this.made = new Array<CacheEntry | undefined>(n);
    this.depsAt = offsets(body.dn, body.d.length);
    for (const i of body.ev) this.readingEnv.add(i);
  }

  /** The lookups part, parsed on first need; a damaged one makes every lookup fail its check (the entries render again). */
  #lookupPart(): LookupBody {
    if (this.#lookupBody === undefined) {
      try {
        const l = this.readLookups();
        if (!Array.isArray(l.a) || !Array.isArray(l.lq) || !Array.isArray(l.la) || l.lq.length !== l.la.length || l.ln.length !== this.body.k.length) throw new Error('bad lookups');
        this.lookupsAt = offsets(l.ln, l.lq.length);
        this.#lookupBody = l;
      } catch {
        this.lookupsAt = this.body.k.map((_, i) => i).concat(this.body.k.length);
        this.#lookupBody = { a: [], ln: this.body.k.map(() => 1), lq: this.body.k.map(() => 'e\u0000'), la: this.body.k.map(() => -1) };
      }
    }
    return this.#lookupBody;
  }

  get size(): number {
    return this.at.size;
  }

  has(key: string): boolean {
    return this.at.has(key);
  }

  keys(): Iterable<string> {
    return this.at.keys();
  }

  get(key: string): CacheEntry | undefined {
    const i = this.at.get(key);
    return i === undefined ? undefined : this.entry(i);
  }

  keyAt(i: number): string | undefined {
    return this.body.k[i];
  }

  entry(i: number): CacheEntry {
    let e = this.made[i];
    if (e !== undefined) return e;
    const b = this.body;
    const config = b.g[i]!;
    if (config !== -1 && !(config >= 0 && config < b.c.length)) throw new Error('bad config index');
    e = new TableEntry(this, i, config === -1 ? null : (b.c[config] as ModelConfig));
    this.made[i] = e;
    return e;
  }

  /** Entry `i`'s lookups, decoded. */
  lookupsOf(i: number): Lookup[] {
    const { lq, la, a } = this.#lookupPart();
    const out: Lookup[] = [];
    for (let j = this.lookupsAt[i]!; j < this.lookupsAt[i + 1]!; j++) {
      const answer = la[j]!;
      out.push([lq[j]![0] as Lookup[0], lq[j]!.slice(1), answer === -1 ? null : (a[answer] ?? '\u0000missing')]);
    }
    return out;
  }

  dependenciesOf(i: number): string[] {
    return this.body.d.slice(this.depsAt[i], this.depsAt[i + 1]);
  }

  readsEnv(i: number): boolean {
    return this.readingEnv.has(i);
  }

  column<K extends 'q' | 'b' | 'o' | 't' | 'w'>(name: K): FileBody[K] {
    return this.body[name];
  }
}

/** One entry of a cache file: its lookups decoded on first use (most compiles never check them). */
class TableEntry implements CacheEntry {
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  readonly dependencies: readonly string[];
  readonly template: string | null;
  readonly readsEnv: boolean;
  readonly logs: readonly (readonly [Level, string])[];
  #lookups: Lookup[] | undefined;

  constructor(
    private readonly table: EntryTable,
    private readonly i: number,
    readonly config: ModelConfig | null,
  ) {
    this.sql = table.column('q')[i]!;
    this.pre = table.column('b')[i] || [];
    this.post = table.column('o')[i] || [];
    this.dependencies = table.dependenciesOf(i);
    this.template = table.column('t')[i] || null;
    this.readsEnv = table.readsEnv(i);
    this.logs = table.column('w')[i] ?? [];
  }

  get lookups(): readonly Lookup[] {
    return (this.#lookups ??= this.table.lookupsOf(this.i));
  }
}

/** Start of each entry's run in a flattened column, from the per-entry counts (one extra at the end). */
function offsets(counts: readonly number[], total: number): number[] {
  const at = [0];
  for (const c of counts) at.push(at[at.length - 1]! + c);
  if (at[at.length - 1] !== total) throw new Error('bad counts');
  return at;
}

function unpack(root: string, body: FileBody, lookups: () => LookupBody): Omit<Store, 'fileStamp'> {
  const models = new EntryTable(body, lookups);
  const n = body.sp.length;
  for (const col of [body.sm, body.sc, body.ss, body.si, body.sf, body.sb, body.se]) if (!Array.isArray(col) || col.length !== n) throw new Error('bad source columns');
  const config = (i: number) => {
    if (i === -1) return null;
    if (!(i >= 0 && i < body.c.length)) throw new Error('bad config index');
    return body.c[i] as Record<string, unknown>;
  };
  const sources = new Map<string, SourceEntry>();
  const entries = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const abs = absFrom(root, body.sp[i]!);
    sources.set(abs, [[body.sm[i]!, body.sc[i]!, body.ss[i]!, body.si[i]!], config(body.sf[i]!), body.sb[i]!]);
    const e = body.se[i]!;
    if (e !== -1) entries.set(abs, models.keyAt(e) ?? '');
  }
  const l = body.l;
  if (l && l.o !== undefined && (!Array.isArray(l.o) || l.o.some((x) => typeof x !== 'string'))) throw new Error('bad order');
  const last: LastCompile | undefined = l ? { variant: l.v, entries, prefixes: new Map(Object.entries(l.p)), index: l.i, ...(l.o ? { order: l.o } : {}) } : undefined;
  const configs = new Map<string, ParsedConfig>();
  for (const [key, config, logs] of body.cf ?? []) configs.set(key, { config: configFromJson(config), logs });
  const walk = unpackWalk(root, body);
  return { models, sources, configs, last, ...(walk ? { walk } : {}) };
}

function readCacheFile(file: string, logger: Logger): Omit<Store, 'fileStamp'> | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    logger.log('debug', `compile cache ${file} not read (${(err as Error).message}); compiling every model`);
    return undefined;
  }
  const nl = data.indexOf(0x0a);
  const head = (nl < 0 ? data : data.subarray(0, nl)).toString('utf8');
  const cut = head.lastIndexOf(' ');
  // The checksum is over the body's bytes: no decoding before it holds.
  if (nl < 0 || head.slice(0, cut) !== FORMAT || head.slice(cut + 1) !== createHash('sha256').update(data.subarray(nl + 1)).digest('base64url')) {
    logger.log('debug', `compile cache ${file} is stale or corrupt; compiling every model`);
    return undefined;
  }
  try {
    // Two JSON documents, one a line: the entries, then their lookups (parsed when needed).
    const nl2 = data.indexOf(0x0a, nl + 1);
    if (nl2 < 0) throw new Error('no lookups part');
    return unpack(dirname(dirname(file)), JSON.parse(data.toString('utf8', nl + 1, nl2)) as FileBody, () => JSON.parse(data.toString('utf8', nl2 + 1)) as LookupBody);
  } catch {
    logger.log('debug', `compile cache ${file} is corrupt; compiling every model`);
    return undefined;
  }
}

/** Forgets every in-memory store (tests; a daemon could call it under memory pressure). */
export function clearCompileCacheMemory(): void {
  stores.clear();
  memos.clear();
}

let codeStamp: string | undefined;

/**
 * A stamp of the code that renders: the Node version and the size and
 * modification time of every module of the engine's top folder and its
 * compiler, templating, SQL and project-loading folders (as installed or
 * built), so an upgrade or a rebuild never reuses output of other code.
 */
export function compilerCodeStamp(): string {
  if (codeStamp !== undefined) return codeStamp;
  const engineDir = dirname(dirname(fileURLToPath(import.meta.url)));
  const parts: string[] = [FORMAT, process.version];
  for (const sub of ['', 'compile', 'template', 'sql', 'project']) {
    const d = join(engineDir, sub);
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const st = statSync(join(d, name));
        parts.push(`${sub}/${name}:${st.size}:${st.mtimeMs}`);
      } catch {
        parts.push(`${sub}/${name}:?`);
      }
    }
  }
  codeStamp = hashText(parts.join('\n'));
  return codeStamp;
}
