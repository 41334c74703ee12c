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
 * (statStamp) is unchanged is not read again. The cache also keeps
 * what the last compile of the directory was (its *variant*: code, config,
 * flags and target; per model file the entry it used; per folder the hash of
 * the macros in scope; a hash of every node's name and naming), so a compile
 * of the same variant takes an unchanged file's entry without hashing its
 * inputs, and checks the entry's node lookups only when some node changed.
 *
 * Entries live in memory for the life of the process (the daemon compiles a
 * project again without reading any cache file) and, for command-line builds,
 * in `<build dir>/.service/compile-cache` (a `.gitignore` beside it ignores the
 * folder; its format: cache-file.ts). The file carries a SHA-256 of its body: a truncated,
 * edited or otherwise corrupt file is ignored and the project compiles in
 * full. Only successful renders are cached; a model that fails renders again
 * every time so its error is always the current one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.js';
import type { CacheEntry, EntryMap, LastCompile, Lookup, ParsedConfig, SourceEntry, Stamp, Store, StoredWalk } from './cache-types.js';
import { CompileMemo } from './compile-memo.js';
import { CACHE_FORMAT, cacheFileText, readCacheFile } from './cache-file.js';
import type { IndexedNode } from './node-index.js';
import { STAT_AHEAD_MIN_BYTES, StatAhead, type StatValues } from './stat-ahead.js';

export type { CacheEntry, EntryMap, LastCompile, Lookup, ParsedConfig, SourceEntry, Stamp, Store, StoredWalk };

export const CACHE_DIR_NAME = '.service';
export const CACHE_FILE_NAME = 'compile-cache';

/** A node's identity as far as a render that found it can tell: its name, kind and every name form (not kept; see nodeSignature). */
export function signatureText(n: IndexedNode): string {
  const m = n.naming;
  return `${n.name}\u0001${n.kind}\u0001${m.database ?? ''}\u0001${m.schema}\u0001${m.name}\u0001${m.prodName}\u0001${m.fullName}`;
}

/** signatureText, made once per node. */
export function nodeSignature(n: IndexedNode): string {
  let sig = signatures.get(n);
  if (sig === undefined) {
    sig = signatureText(n);
    signatures.set(n, sig);
  }
  return sig;
}

/** Index nodes are immutable and looked up by many models: one signature each. */
const signatures = new WeakMap<IndexedNode, string>();

export const hashText = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** An entry key: 128 bits of the inputs' hash are plenty to tell entries apart and keep the file small. */
export const entryKey = (text: string): string => hashText(text).slice(0, 22);

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
  const st = statSync(file, { throwIfNoEntry: false });
  return st === undefined ? undefined : fileStamp(st);
}

const fileStamp = (st: { mtimeMs: number; size: number }) => `${st.mtimeMs}:${st.size}`;

/**
 * A file's stat stamp, like git's index: modification and change times,
 * size and inode. A file modified within the last two seconds gets none
 * (its next write could keep the same times): it is read every time until
 * it has been quiet for a while. With `known`, the file's stamp when equal
 * to it is `known` itself: one stat both checks a stamp and makes the new one.
 */
export function statStamp(abs: string, now: number, known?: Stamp, ahead?: StatAhead): Stamp | undefined {
  const st = trustedStat(abs, now, ahead);
  if (st === undefined) return undefined;
  if (known !== undefined && st[0] === known[0] && st[1] === known[1] && st[2] === known[2] && st[3] === known[3]) return known;
  return st;
}

/** Whether the file at `abs` has the stat stamp `stamp` (and is old enough to be trusted by it). */
export function hasStamp(abs: string, now: number, stamp: Stamp): boolean {
  return statStamp(abs, now, stamp) === stamp;
}

/** `ahead`: the values its helper thread stat'ed (stat-ahead.ts), when it has the file. */
function trustedStat(abs: string, now: number, ahead?: StatAhead): StatValues | undefined {
  let st = ahead?.values(abs);
  if (st === undefined) {
    const s = statSync(abs, { throwIfNoEntry: false });
    st = s === undefined ? null : [s.mtimeMs, s.ctimeMs, s.size, s.ino];
  }
  return st === null || now - st[0] < 2000 || now - st[1] < 2000 ? undefined : st;
}

const empty = (): Store => ({ models: new Map(), sources: new Map(), configs: new Map(), last: undefined, fileStamp: undefined });

/**
 * The store of a build directory: the in-memory one when the file has not
 * changed since this process read or wrote it, else the file's (nothing
 * when it is missing or corrupt — then the compile is a full one).
 */
export function openStore(loc: CacheLocation, logger: Logger): { store: Store; ahead?: StatAhead } {
  const mem = stores.get(loc.root);
  if (loc.dir === undefined) return { store: mem ?? empty() };
  const file = join(loc.dir, CACHE_FILE_NAME);
  const st = statSync(file, { throwIfNoEntry: false });
  const stamp = st === undefined ? undefined : fileStamp(st);
  if (mem && mem.fileStamp === stamp) return { store: mem };
  if (st === undefined) return { store: mem ?? empty() };
  // A large file: its model files are stat'ed on a helper thread, which starts while the file is read.
  const ahead = st.size >= STAT_AHEAD_MIN_BYTES ? new StatAhead() : undefined;
  const read = readCacheFile(file, logger);
  if (!read) {
    ahead?.stop();
    return { store: empty() };
  }
  ahead?.stat([...read.sources.keys()]);
  return { store: { ...read, fileStamp: stamp }, ...(ahead ? { ahead } : {}) };
}

/** Writes `store` to the cache file in `dir` and keeps it as the directory's in-memory store. */
export function saveStore(root: string, dir: string, store: Store, logger: Logger): void {
  const file = join(dir, CACHE_FILE_NAME);
  try {
    mkdirSync(dir, { recursive: true });
    // The folder holds only generated files: git (and tools that read .gitignore) skip it.
    const ignore = join(dir, '.gitignore');
    if (fileStampOf(ignore) === undefined) writeFileSync(ignore, '# generated by service: safe to delete\n*\n');
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, cacheFileText(root, store));
    renameSync(tmp, file);
    stores.set(root, { ...store, fileStamp: fileStampOf(file) });
  } catch (err) {
    // A read-only project still builds: the cache stays in memory for this process.
    logger.log('debug', `compile cache not written to ${file}: ${(err as Error).message}`);
    stores.set(root, { ...store, fileStamp: undefined });
  }
}

/** Keeps `store` in memory only, as the file's content (nothing to write: the file already holds it). */
export function keepStore(loc: CacheLocation, store: Store): void {
  stores.set(loc.root, store);
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
  const parts: string[] = [CACHE_FORMAT, process.version];
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
