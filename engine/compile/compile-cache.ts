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
 * Entries live in memory for the life of the process (the daemon compiles a
 * project again without reading any cache file) and, for command-line builds,
 * in `<build dir>/.service/compile-cache` (a `.gitignore` beside it ignores the
 * folder). The file carries a SHA-256 of its body: a truncated, edited or
 * otherwise corrupt file is ignored and the project compiles in full. Only
 * successful renders are cached; a model that fails renders again every time
 * so its error is always the current one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Level, Logger } from '../log.js';
import type { ModelConfig } from '../project/model-config.js';
import type { IndexedNode } from './node-index.js';

const FORMAT = 'service-compile-cache 3';
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

/** A model file read and split before: its front-matter mapping (or null) and body, valid while its stat stamp holds. */
export type SourceEntry = readonly [stamp: string, config: Record<string, unknown> | null, body: string];

/** The entries of one build directory, and what this process last read or wrote to its file. */
interface Store {
  models: Map<string, CacheEntry>;
  sources: Map<string, SourceEntry>;
  /** `mtimeMs:size` of the file when it was read or written; another value means someone else wrote it. */
  fileStamp: string | undefined;
}

/** In the file, lookup answers are indexes into `answers`: a node's signature is written once, not once per lookup. */
type PackedLookup = readonly [kind: 'r' | 'f' | 'e', query: string, answer: number | null];
type PackedEntry = Omit<CacheEntry, 'lookups'> & { readonly lookups: readonly PackedLookup[] };

interface FileBody {
  readonly answers: readonly string[];
  readonly models: Record<string, PackedEntry>;
  readonly sources: Record<string, SourceEntry>;
}

function pack(models: ReadonlyMap<string, CacheEntry>, sources: ReadonlyMap<string, SourceEntry>): FileBody {
  const answers: string[] = [];
  const at = new Map<string, number>();
  const indexOf = (a: string) => {
    let i = at.get(a);
    if (i === undefined) {
      i = answers.push(a) - 1;
      at.set(a, i);
    }
    return i;
  };
  const packed: Record<string, PackedEntry> = {};
  for (const [k, e] of models) packed[k] = { ...e, lookups: e.lookups.map(([kind, q, a]): PackedLookup => [kind, q, a === null ? null : indexOf(a)]) };
  return { answers, models: packed, sources: Object.fromEntries(sources) };
}

function unpack(body: FileBody): Map<string, CacheEntry> {
  const { answers } = body;
  const models = new Map<string, CacheEntry>();
  for (const [k, e] of Object.entries(body.models)) {
    const lookups = e.lookups.map(([kind, q, a]): Lookup => {
      if (a !== null && (typeof a !== 'number' || a >= answers.length)) throw new Error('bad answer index');
      return [kind, q, a === null ? null : answers[a]!];
    });
    models.set(k, { ...e, lookups });
  }
  return models;
}

const stores = new Map<string, Store>();

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
export function statStamp(abs: string, now: number): string | undefined {
  try {
    const st = statSync(abs);
    if (now - st.mtimeMs < 2000 || now - st.ctimeMs < 2000) return undefined;
    return `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** One compile's use of the cache: what was there, what this compile used or made. */
export class CacheSession {
  readonly usedModels = new Map<string, CacheEntry>();
  readonly usedSources = new Map<string, SourceEntry>();
  /** Entries made by this compile (not taken from the cache). */
  fresh = 0;
  private readonly now = Date.now();

  constructor(
    readonly location: CacheLocation,
    private readonly opened: Store,
  ) {}

  model(key: string): CacheEntry | undefined {
    return this.opened.models.get(key);
  }

  keepModel(key: string, e: CacheEntry, made: boolean): void {
    this.usedModels.set(key, e);
    if (made) this.fresh++;
  }

  /**
   * A model file's text split into front-matter and body: from the cache when
   * its stat stamp is unchanged, else read (and parsed by `parse`).
   */
  readSource(abs: string, parse: (text: string) => { config: Record<string, unknown> | null; body: string }): { config: Record<string, unknown> | null; body: string } {
    const stamp = statStamp(abs, this.now);
    const hit = stamp === undefined ? undefined : this.opened.sources.get(abs);
    if (hit !== undefined && hit[0] === stamp) {
      this.usedSources.set(abs, hit);
      return { config: hit[1], body: hit[2] };
    }
    const parsed = parse(readFileSync(abs, 'utf8'));
    if (stamp !== undefined) {
      this.usedSources.set(abs, [stamp, parsed.config, parsed.body]);
      this.fresh++;
    }
    return parsed;
  }

  /**
   * Keeps this compile's entries in memory and, with a directory, writes them
   * to the file — only when they differ from what was opened, so an
   * unchanged project writes nothing. Model entries of other variants
   * (another target, --prod vs dev) stay, up to as many again as this compile
   * used, so switching between two variants does not thrash.
   */
  save(logger: Logger): void {
    const loc = this.location;
    const models = new Map(this.usedModels);
    for (const [k, e] of this.opened.models) {
      if (models.size >= this.usedModels.size * 2 + 16) break;
      if (!models.has(k)) models.set(k, e);
    }
    const sources = this.usedSources;
    const dirty = this.fresh > 0 || models.size !== this.opened.models.size || sources.size !== this.opened.sources.size;
    if (!dirty) {
      stores.set(loc.root, this.opened);
      return;
    }
    if (loc.dir === undefined) {
      stores.set(loc.root, { models, sources, fileStamp: undefined });
      return;
    }
    const file = join(loc.dir, CACHE_FILE_NAME);
    try {
      mkdirSync(loc.dir, { recursive: true });
      // The folder holds only generated files: git (and tools that read .gitignore) skip it.
      const ignore = join(loc.dir, '.gitignore');
      if (fileStampOf(ignore) === undefined) writeFileSync(ignore, '# generated by service: safe to delete\n*\n');
      const text = JSON.stringify(pack(models, sources));
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${FORMAT} ${hashText(text)}\n${text}`);
      renameSync(tmp, file);
      stores.set(loc.root, { models, sources, fileStamp: fileStampOf(file) });
    } catch (err) {
      // A read-only project still builds: the cache stays in memory for this process.
      logger.log('debug', `compile cache not written to ${file}: ${(err as Error).message}`);
      stores.set(loc.root, { models, sources, fileStamp: undefined });
    }
  }
}

/**
 * Opens the cache of a build directory: the in-memory store when the file
 * has not changed since this process read or wrote it, else the file's
 * (nothing when it is missing or corrupt — then the compile is a full one).
 */
export function openCache(loc: CacheLocation, logger: Logger): CacheSession {
  const empty = (): Store => ({ models: new Map(), sources: new Map(), fileStamp: undefined });
  const mem = stores.get(loc.root);
  if (loc.dir === undefined) return new CacheSession(loc, mem ?? empty());
  const file = join(loc.dir, CACHE_FILE_NAME);
  const stamp = fileStampOf(file);
  if (mem && mem.fileStamp === stamp) return new CacheSession(loc, mem);
  if (stamp === undefined) return new CacheSession(loc, mem ?? empty());
  const read = readCacheFile(file, logger);
  return new CacheSession(loc, read ? { ...read, fileStamp: stamp } : empty());
}

function readCacheFile(file: string, logger: Logger): Pick<Store, 'models' | 'sources'> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    logger.log('debug', `compile cache ${file} not read (${(err as Error).message}); compiling every model`);
    return undefined;
  }
  const nl = text.indexOf('\n');
  const head = nl < 0 ? text : text.slice(0, nl);
  const body = nl < 0 ? '' : text.slice(nl + 1);
  const cut = head.lastIndexOf(' ');
  if (head.slice(0, cut) !== FORMAT || head.slice(cut + 1) !== hashText(body)) {
    logger.log('debug', `compile cache ${file} is stale or corrupt; compiling every model`);
    return undefined;
  }
  try {
    const parsed = JSON.parse(body) as FileBody;
    if (!Array.isArray(parsed.answers) || typeof parsed.models !== 'object' || typeof parsed.sources !== 'object' || parsed.models === null || parsed.sources === null) throw new Error('bad shape');
    return { models: unpack(parsed), sources: new Map(Object.entries(parsed.sources)) };
  } catch {
    logger.log('debug', `compile cache ${file} is corrupt; compiling every model`);
    return undefined;
  }
}

/** Forgets every in-memory store (tests; a daemon could call it under memory pressure). */
export function clearCompileCacheMemory(): void {
  stores.clear();
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
