/**
 * One project's files as a plain directory tree (spec api.md §3.2, §4.6–§4.10).
 * Only file-system behaviour and file-system errors live here; job
 * classification and job references are the job layer's, which wraps its own
 * check-then-write in `withLock` so nothing changes between check and write.
 *
 * Reads take no lock: writes replace files by rename, so a reader sees the old
 * or the new content, never a mix. Every mutation takes the project lock.
 */
import { lstat, mkdir, open, readdir, realpath, rename as fsRename, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.js';
import { isTempName, writeFileAtomic } from './atomic-write.js';
import { decodeBody, directoryEntry, fileEntry, type ProjectFile } from './file-entry.js';
import { fileNameProblem, isInside, validateFileName, validatePrefix } from './file-name.js';
import { projectLock, type ProjectLock } from './project-lock.js';

export type { ProjectFile } from './file-entry.js';

export interface SaveInput {
  readonly name: string;
  readonly body?: string;
  readonly is_dir?: boolean;
  readonly encoding?: 'base64';
}

export interface ListOptions {
  /** Plain string prefix on the name (§4.7); "" or absent lists everything. */
  readonly prefix?: string;
  readonly includeBody?: boolean;
}

const quote = (s: string): string => JSON.stringify(s);
const notFound = (name: string): EngineError => new EngineError('not_found', `file ${quote(name)} not found`);

export class ProjectTree {
  readonly root: string;
  private readonly lock: ProjectLock;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.lock = projectLock(this.root);
  }

  /**
   * Runs `fn` holding the project lock (§2.8). Re-entrant: the tree's own
   * save/delete/rename called inside `fn` do not wait for themselves.
   */
  withLock<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.lock.run(fn);
  }

  /** §2.8 validation; the absolute path of `name`. Throws 'bad_request'. */
  resolve(name: string): string {
    return validateFileName(name, this.root);
  }

  /** §4.6: the file with its body (directories: body ""). 404 when missing. */
  async get(name: string): Promise<ProjectFile> {
    const entry = await this.readEntry(name, this.resolve(name), true);
    if (entry === null) throw notFound(name);
    return entry;
  }

  /** The entry without body, or null when nothing is at `name`. */
  async stat(name: string): Promise<ProjectFile | null> {
    return this.readEntry(name, this.resolve(name), false);
  }

  /** The content as UTF-8 text (whatever its bytes). 404 when missing or not a regular file. */
  async readText(name: string): Promise<string> {
    const abs = this.resolve(name);
    if (!(await statOrNull(abs))?.isFile()) throw notFound(name);
    try {
      return await readRegularFile(abs).then((r) => r.content.toString('utf8'));
    } catch (err) {
      if (isMissing(err) || errno(err) === 'EISDIR') throw notFound(name);
      throw wrap(`cannot read file ${quote(name)}`, err);
    }
  }

  /** True when a file or directory exists at `name`. */
  async exists(name: string): Promise<boolean> {
    return (await this.stat(name)) !== null;
  }

  /** True when a regular file exists at `name`. */
  async isFile(name: string): Promise<boolean> {
    const entry = await this.stat(name);
    return entry !== null && !entry.is_dir;
  }

  /**
   * §4.7: every entry whose name starts with `prefix`, recursively, sorted by
   * name in byte order, directories as their own entries. Never listed: `.git`,
   * names breaking §2.8, in-flight temporaries, special files, symlinks that
   * dangle or leave the root; symlinked directories are listed, not entered.
   */
  async list(options: ListOptions = {}): Promise<ProjectFile[]> {
    const prefix = options.prefix ?? '';
    validatePrefix(prefix);
    let realRoot: string;
    try {
      realRoot = await realpath(this.root);
    } catch (err) {
      if (isMissing(err)) return [];
      throw wrap('cannot list files', err);
    }
    const out: ProjectFile[] = [];
    await this.walk('', prefix, realRoot, options.includeBody ?? false, out);
    return out.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  }

  /** `counts.files` of §3.8: regular files in the tree, directories excluded. */
  async countFiles(): Promise<number> {
    return (await this.list()).filter((f) => !f.is_dir).length;
  }

  /**
   * §4.8 file-system part: creates a directory (`is_dir`), or creates/replaces
   * a file atomically; missing parents are created. Returns the entry without body.
   */
  async save(input: SaveInput): Promise<ProjectFile> {
    const { name } = input;
    const abs = this.resolve(name);
    if (input.is_dir === true) {
      if (input.body !== undefined && input.body !== '') throw new EngineError('bad_request', 'body must be empty when is_dir is true');
      return this.withLock(async () => {
        await this.ensureDirectories(name.split('/'));
        return this.entryAfterWrite(name, abs);
      });
    }
    const data = decodeBody(input.body ?? '', input.encoding);
    return this.withLock(async () => {
      const segments = name.split('/');
      await this.ensureDirectories(segments.slice(0, -1));
      if ((await statOrNull(abs))?.isDirectory()) throw new EngineError('conflict', `${quote(name)} is a directory`);
      try {
        await writeFileAtomic(abs, data);
      } catch (err) {
        if (errno(err) === 'EISDIR') throw new EngineError('conflict', `${quote(name)} is a directory`);
        throw wrap(`cannot save file ${quote(name)}`, err);
      }
      return this.entryAfterWrite(name, abs);
    });
  }

  /**
   * §4.9 file-system part: removes a file, or a directory with its subtree.
   * Returns the names of the non-directory entries removed (as listed before).
   */
  async delete(name: string): Promise<string[]> {
    const abs = this.resolve(name);
    return this.withLock(async () => {
      const st = await lstatOrNull(abs);
      if (st === null) throw notFound(name);
      const removed = st.isDirectory() ? (await this.list({ prefix: `${name}/` })).filter((f) => !f.is_dir).map((f) => f.name) : [name];
      try {
        await rm(abs, { recursive: st.isDirectory(), force: false });
      } catch (err) {
        if (isMissing(err)) throw notFound(name);
        throw wrap(`cannot delete file ${quote(name)}`, err);
      }
      return removed;
    });
  }

  /**
   * §4.10 file-system part: moves a file or directory subtree to `newName`,
   * creating its parents. Returns the moved entry (without body).
   */
  async rename(oldName: string, newName: string): Promise<ProjectFile> {
    const oldAbs = this.resolve(oldName);
    const newAbs = this.resolve(newName);
    if (newName.startsWith(`${oldName}/`)) throw new EngineError('bad_request', `cannot move ${quote(oldName)} into itself`);
    return this.withLock(async () => {
      if ((await lstatOrNull(oldAbs)) === null) throw notFound(oldName);
      if ((await lstatOrNull(newAbs)) !== null) throw new EngineError('conflict', `file ${quote(newName)} already exists`);
      await this.ensureDirectories(newName.split('/').slice(0, -1));
      try {
        await fsRename(oldAbs, newAbs);
      } catch (err) {
        throw wrap(`cannot rename file ${quote(oldName)} to ${quote(newName)}`, err);
      }
      return this.entryAfterWrite(newName, newAbs);
    });
  }

  /** Creates each missing directory of the relative path `segments`; 409 on a non-directory. */
  private async ensureDirectories(segments: readonly string[]): Promise<void> {
    await mkdir(this.root, { recursive: true });
    for (let i = 1; i <= segments.length; i++) {
      const rel = segments.slice(0, i).join('/');
      const abs = path.join(this.root, rel);
      const st = await statOrNull(abs);
      if (st?.isDirectory()) continue;
      if (st !== null) throw new EngineError('conflict', `${quote(rel)} is not a directory`);
      try {
        await mkdir(abs);
      } catch (err) {
        // Raced by an outside writer, or a dangling symlink sits there.
        if (errno(err) === 'EEXIST' && (await statOrNull(abs))?.isDirectory()) continue;
        if (errno(err) === 'EEXIST') throw new EngineError('conflict', `${quote(rel)} is not a directory`);
        throw wrap(`cannot create directory ${quote(rel)}`, err);
      }
    }
  }

  private async entryAfterWrite(name: string, abs: string): Promise<ProjectFile> {
    const entry = await this.readEntry(name, abs, false);
    if (entry === null) throw new EngineError('internal', `file ${quote(name)} vanished after it was written`);
    return entry;
  }

  /** The entry at `abs` (already validated), or null when missing or not a file/directory. */
  private async readEntry(name: string, abs: string, withBody: boolean): Promise<ProjectFile | null> {
    const st = await statOrNull(abs);
    if (st === null) return null;
    if (st.isDirectory()) return directoryEntry(name, st, withBody);
    if (!st.isFile()) return null;
    if (!withBody) return fileEntry(name, st);
    try {
      // One descriptor for stat and content, so size and body agree even if a save lands meanwhile.
      const { st: fst, content } = await readRegularFile(abs);
      return fileEntry(name, fst, content);
    } catch (err) {
      if (isMissing(err) || errno(err) === 'EISDIR') return null;
      throw wrap(`cannot read file ${quote(name)}`, err);
    }
  }

  private async walk(dirRel: string, prefix: string, realRoot: string, withBody: boolean, out: ProjectFile[]): Promise<void> {
    const dirAbs = dirRel === '' ? this.root : path.join(this.root, dirRel);
    let names: string[];
    try {
      names = await readdir(dirAbs);
    } catch (err) {
      if (isMissing(err)) return; // removed while walking
      throw wrap(`cannot list directory ${quote(dirRel)}`, err);
    }
    for (const base of names) {
      const rel = dirRel === '' ? base : `${dirRel}/${base}`;
      const wanted = rel.startsWith(prefix);
      if (!wanted && !prefix.startsWith(`${rel}/`)) continue;
      if (isTempName(base) || fileNameProblem(rel) !== null) continue;
      const abs = path.join(dirAbs, base);
      const lst = await lstatOrNull(abs);
      if (lst === null) continue;
      let enter = lst.isDirectory();
      if (lst.isSymbolicLink()) {
        const target = await realpath(abs).catch(() => null);
        if (target === null || !isInside(realRoot, target)) continue;
        enter = false; // avoids cycles and listing the same files twice
      }
      if (wanted) {
        const entry = await this.readEntry(rel, abs, withBody);
        if (entry !== null) out.push(entry);
      }
      if (enter) await this.walk(rel, prefix, realRoot, withBody, out);
    }
  }
}

async function readRegularFile(abs: string): Promise<{ st: Stats; content: Buffer }> {
  const fh = await open(abs, 'r');
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw Object.assign(new Error(`${abs} is a directory`), { code: 'EISDIR' });
    return { st, content: await fh.readFile() };
  } finally {
    await fh.close();
  }
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function isMissing(err: unknown): boolean {
  const code = errno(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function wrap(message: string, err: unknown): EngineError {
  return err instanceof EngineError ? err : new EngineError('internal', message, err);
}

async function statOrNull(abs: string): Promise<Stats | null> {
  try {
    return await stat(abs);
  } catch (err) {
    if (isMissing(err)) return null;
    throw wrap(`cannot inspect ${abs}`, err);
  }
}

async function lstatOrNull(abs: string): Promise<Stats | null> {
  try {
    return await lstat(abs);
  } catch (err) {
    if (isMissing(err)) return null;
    throw wrap(`cannot inspect ${abs}`, err);
  }
}
