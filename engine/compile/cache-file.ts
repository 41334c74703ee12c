/**
 * The compile cache's file (`<build dir>/.service/compile-cache`): a header
 * line with the format and a SHA-256 of the rest, then two JSON documents,
 * one a line — the entries, sources, config parses, last compile and walk,
 * then the entries' lookups (parsed only when one is checked or the file is
 * written). One column per field, so JSON.parse makes a few large arrays
 * instead of several small objects per model: JSON.parse read the
 * 10,000-model cache ≈2× as fast as v8.deserialize.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Level, Logger } from '../log.js';
import { configFromJson, configToJson } from '../project/config.js';
import { discoveredFile } from '../project/discover.js';
import type { ModelConfig } from '../project/model-config.js';
import type { CacheEntry, EntryMap, LastCompile, Lookup, ParsedConfig, SourceEntry, Store, StoredWalk } from './cache-types.js';

/** The first word of the file: a file of another format is ignored (and the compiler's code stamp includes it). */
export const CACHE_FORMAT = 'service-compile-cache 5';
const FORMAT = CACHE_FORMAT;

/** The file's text for `store` of the build directory `root`. */
export function cacheFileText(root: string, store: Store): string {
  const [entries, lookups] = pack(root, store);
  const text = `${JSON.stringify(entries)}\n${JSON.stringify(lookups)}`;
  return `${FORMAT} ${createHash('sha256').update(text).digest('base64url')}\n${text}`;
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

export function readCacheFile(file: string, logger: Logger): Omit<Store, 'fileStamp'> | undefined {
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
