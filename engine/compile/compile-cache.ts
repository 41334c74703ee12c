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

const FORMAT = 'service-compile-cache 1';
export const CACHE_DIR_NAME = '.service';
export const CACHE_FILE_NAME = 'compile-cache';

/** One recorded lookup: kind (`r` resolve, `f` full-name match, `e` env var), the query, the answer's signature or null. */
export type Lookup = readonly [kind: 'r' | 'f' | 'e', query: string, answer: string | null];

export interface CacheEntry {
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  readonly config: ModelConfig;
  readonly dependencies: readonly string[];
  readonly template: string;
  readonly lookups: readonly Lookup[];
  readonly logs: readonly (readonly [Level, string])[];
}

/** A node's identity as far as a render that found it can tell: its name, kind and every name form. */
export function nodeSignature(n: IndexedNode): string {
  const m = n.naming;
  return `${n.name}\u0001${n.kind}\u0001${m.database ?? ''}\u0001${m.schema}\u0001${m.name}\u0001${m.prodName}\u0001${m.fullName}`;
}

export const hashText = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** The entries of one build directory, and what this process last read or wrote to its file. */
interface Store {
  entries: Map<string, CacheEntry>;
  /** `mtimeMs:size` of the file when it was read or written; another value means someone else wrote it. */
  fileStamp: string | undefined;
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
 * The entries for a build directory: the in-memory store when the file has
 * not changed since this process read or wrote it, else the file's (nothing
 * when it is missing or corrupt — then the compile is a full one).
 */
export function openCache(loc: CacheLocation, logger: Logger): Map<string, CacheEntry> {
  const mem = stores.get(loc.root);
  if (loc.dir === undefined) return mem?.entries ?? new Map();
  const file = join(loc.dir, CACHE_FILE_NAME);
  const stamp = fileStampOf(file);
  if (mem && mem.fileStamp === stamp) return mem.entries;
  if (stamp === undefined) return mem?.entries ?? new Map();
  const entries = readCacheFile(file, logger);
  stores.set(loc.root, { entries, fileStamp: stamp });
  return entries;
}

function readCacheFile(file: string, logger: Logger): Map<string, CacheEntry> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    logger.log('debug', `compile cache ${file} not read (${(err as Error).message}); compiling every model`);
    return new Map();
  }
  const nl = text.indexOf('\n');
  const head = nl < 0 ? text : text.slice(0, nl);
  const body = nl < 0 ? '' : text.slice(nl + 1);
  const [format, sum] = [head.slice(0, head.lastIndexOf(' ')), head.slice(head.lastIndexOf(' ') + 1)];
  if (format !== FORMAT || sum !== hashText(body)) {
    logger.log('debug', `compile cache ${file} is stale or corrupt; compiling every model`);
    return new Map();
  }
  try {
    const parsed = JSON.parse(body) as Record<string, CacheEntry>;
    return new Map(Object.entries(parsed));
  } catch {
    logger.log('debug', `compile cache ${file} is corrupt; compiling every model`);
    return new Map();
  }
}

/**
 * Keeps `used` (this compile's entries) in memory and, with a directory,
 * writes them to the file — only when they differ from what was opened, so
 * an unchanged project writes nothing. Entries of other variants (another
 * target, --prod vs dev) that were in the file stay, up to as many again as
 * this compile used, so switching between two variants does not thrash.
 */
export function saveCache(loc: CacheLocation, opened: Map<string, CacheEntry>, used: Map<string, CacheEntry>, changed: boolean, logger: Logger): void {
  const keep = new Map(used);
  for (const [k, e] of opened) {
    if (keep.size >= used.size * 2 + 16) break;
    if (!keep.has(k)) keep.set(k, e);
  }
  const dirty = changed || keep.size !== opened.size;
  if (loc.dir === undefined) {
    stores.set(loc.root, { entries: keep, fileStamp: undefined });
    return;
  }
  if (!dirty) {
    stores.set(loc.root, { entries: opened, fileStamp: stores.get(loc.root)?.fileStamp ?? fileStampOf(join(loc.dir, CACHE_FILE_NAME)) });
    return;
  }
  const file = join(loc.dir, CACHE_FILE_NAME);
  try {
    mkdirSync(loc.dir, { recursive: true });
    // The folder holds only generated files: git (and tools that read .gitignore) skip it.
    const ignore = join(loc.dir, '.gitignore');
    if (fileStampOf(ignore) === undefined) writeFileSync(ignore, '# generated by service: safe to delete\n*\n');
    const body = JSON.stringify(Object.fromEntries(keep));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${FORMAT} ${hashText(body)}\n${body}`);
    renameSync(tmp, file);
    stores.set(loc.root, { entries: keep, fileStamp: fileStampOf(file) });
  } catch (err) {
    // A read-only project still builds: the cache stays in memory for this process.
    logger.log('debug', `compile cache not written to ${file}: ${(err as Error).message}`);
    stores.set(loc.root, { entries: keep, fileStamp: undefined });
  }
}

/** Forgets every in-memory store (tests; a daemon could call it under memory pressure). */
export function clearCompileCacheMemory(): void {
  stores.clear();
}

let codeStamp: string | undefined;

/**
 * A stamp of the code that renders: the size and modification time of every
 * module of the compiler, templating, SQL and project-loading folders (as
 * installed or built), so an upgrade or a rebuild never reuses output of
 * other code.
 */
export function compilerCodeStamp(): string {
  if (codeStamp !== undefined) return codeStamp;
  const engineDir = dirname(dirname(fileURLToPath(import.meta.url)));
  const parts: string[] = [FORMAT];
  for (const sub of ['compile', 'template', 'sql', 'project']) {
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
