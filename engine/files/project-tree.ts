/**
 * One project's files as a plain directory tree.
 * Only file-system behaviour and file-system errors live here; job
 * classification and job references are the job layer's, which wraps its own
 * check-then-write in `withLock` so nothing changes between check and write.
 *
 * Reads take no lock: writes replace files by rename, so a reader sees the old
 * or the new content, never a mix. Every mutation takes the project lock.
 */
import { lstat, mkdir, open, readdir, realpath, rename as fsRename, rm, stat } from 'node:fs/promises';
import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.js';
import { commitInThread, stageInThread, type CommitReply } from './file-writer.js';
import { commitStaged, commitStagedSync, discardStaged, isTempName, stageFile, syncDirectory, tempPath, type StagedFile } from './atomic-write.js';
import { decodeBody, directoryEntry, fileEntry, type ProjectFile } from './file-entry.js';
import { fileNameProblem, isInside, validateFileName, validatePrefix } from './file-name.js';
import { projectLock, type GroupRunner, type ProjectLock } from './project-lock.js';
import { compareNames, touchTree, treeIndex } from './tree-index.js';

export type { ProjectFile } from './file-entry.js';

export interface SaveInput {
  readonly name: string;
  readonly body?: string;
  readonly is_dir?: boolean;
  readonly encoding?: 'base64';
}

export interface ListOptions {
  /** Plain string prefix on the name; "" or absent lists everything. */
  readonly prefix?: string;
  readonly includeBody?: boolean;
}

/**
 * A save's new content being written and fsync'ed beside its target ahead
 * of the project lock (ProjectTree.stage). `file` resolves to null when that
 * could not be done early (the directory does not exist yet, or any error):
 * the save then writes under the lock as before and reports what goes wrong
 * there.
 */
export interface Staging {
  readonly name: string;
  /** `resolve(name)`. */
  readonly abs: string;
  readonly file: Promise<StagedFile | null>;
}

export interface SaveOptions {
  /** From `stage(name, …)` with the same name and content, started before the lock was requested. */
  readonly staged?: Staging;
  /**
   * Directories whose fsync (making the rename durable) the caller awaits
   * itself after releasing the lock; without it the save awaits the fsync
   * before it returns.
   */
  readonly syncLater?: Set<string>;
}

/** One file of ProjectTree.commitBatch. */
export interface BatchSave {
  readonly name: string;
  /** `resolve(name)`. */
  readonly abs: string;
  /** The content, written afresh when nothing is staged or the staged temporary vanished. */
  readonly data: Uint8Array;
  /** The content staged beside the target (`stage`), or null when that could not be done. */
  readonly staged: StagedFile | null;
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
   * Runs `fn` holding the project lock. Re-entrant: the tree's own
   * save/delete/rename called inside `fn` do not wait for themselves.
   */
  withLock<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.lock.run(fn);
  }

  /**
   * Queues `item` for the project lock, sharing one turn with the callers of
   * the same `runner` queued right before or after it (ProjectLock.join).
   */
  joinLock<I, R>(runner: GroupRunner<I, R>, item: I): Promise<R> {
    return this.lock.join(runner, item);
  }

  /** Validation; the absolute path of `name`. Throws 'bad_request'. */
  resolve(name: string): string {
    return validateFileName(name, this.root);
  }

  /** The file with its body (directories: body ""). 404 when missing. */
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
   * Every entry whose name starts with `prefix`, recursively, sorted by
   * name in byte order, directories as their own entries. Never listed: `.git`,
   * names breaking the project-file-name rules, in-flight temporaries, special files, symlinks that
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
    const index = options.includeBody ? undefined : treeIndex(this.root);
    if (index) {
      return index.list(prefix, async (dirRel, within) => {
        const found: ProjectFile[] = [];
        await this.walk(dirRel, within, realRoot, false, found);
        return found;
      });
    }
    const out: ProjectFile[] = [];
    await this.walk('', prefix, realRoot, options.includeBody ?? false, out);
    return out.sort((a, b) => compareNames(a.name, b.name));
  }

  /** `counts.files`: regular files in the tree, directories excluded. */
  async countFiles(): Promise<number> {
    return (await this.list()).filter((f) => !f.is_dir).length;
  }

  /**
   * File-system part: creates a directory (`is_dir`), or creates/replaces
   * a file atomically; missing parents are created. Returns the entry without body.
   *
   * Only the rename needs the project lock: the content is written and
   * fsync'ed (`stage`) while the save waits for its turn, so writers queued
   * behind one another overlap their fsyncs instead of taking turns. Turns
   * are still taken in arrival order, and the lock is requested before the
   * first await, so the last save requested is the last renamed.
   */
  async save(input: SaveInput, options: SaveOptions = {}): Promise<ProjectFile> {
    const { name } = input;
    if (options.staged !== undefined && options.staged.name !== name) throw new EngineError('internal', `content staged for ${quote(options.staged.name)} offered to the save of ${quote(name)}`);
    const abs = options.staged?.abs ?? this.resolve(name);
    if (input.is_dir === true) {
      if (input.body !== undefined && input.body !== '') throw new EngineError('bad_request', 'body must be empty when is_dir is true');
      return this.withLock(async () => {
        try {
          await this.ensureDirectories(name.split('/'));
        } finally {
          touchTree(this.root, name);
        }
        return this.entryAfterWrite(name, abs);
      });
    }
    const data = decodeBody(input.body ?? '', input.encoding);
    const staging = options.staged?.file ?? (this.lock.isHeld() ? null : this.stage(name, data, abs).file);
    const syncLater = options.syncLater ?? new Set<string>();
    let committed = false;
    try {
      const entry = await this.withLock(async () => {
        const staged = staging === null ? null : await staging;
        const entry = staged === null ? null : this.commitStaged(name, abs, staged);
        if (entry !== null) {
          committed = true;
          syncLater.add(path.dirname(abs));
          return entry;
        }
        // Nothing staged (its directory did not exist), or the temporary vanished with its
        // directory (a delete or pull came first): create the directories and write here.
        const written = await this.writeUnderLock(name, abs, data);
        committed = true;
        syncLater.add(path.dirname(abs));
        return written;
      });
      if (options.syncLater === undefined) await Promise.all([...syncLater].map(syncDirectory));
      return entry;
    } finally {
      // Before the answer: a list right after this save must see it (tree-index.ts).
      touchTree(this.root, name);
      // Refused (a directory there, a file in the parent chain) or failed before the rename.
      const staged = committed || staging === null ? null : await staging;
      if (staged !== null) await discardStaged(staged);
    }
  }

  /**
   * Under the lock: creates the missing directories of `name` and writes
   * `data` over it atomically (the directory is not fsync'ed here).
   */
  private async writeUnderLock(name: string, abs: string, data: Uint8Array): Promise<ProjectFile> {
    await this.ensureDirectories(name.split('/').slice(0, -1), path.dirname(abs));
    const current = await statOrNull(abs);
    if (current?.isDirectory()) throw new EngineError('conflict', `${quote(name)} is a directory`);
    const mode = current?.isFile() ? current.mode & 0o7777 : undefined;
    try {
      const written = await stageFile(abs, data, mode);
      await commitStaged(written, mode);
      return fileEntry(name, written.stats);
    } catch (err) {
      if (errno(err) === 'EISDIR') throw new EngineError('conflict', `${quote(name)} is a directory`);
      throw wrap(`cannot save file ${quote(name)}`, err);
    }
  }

  /**
   * For a caller holding the project lock: saves several files one after the
   * other in the given order, as `save` would with their staged content, and
   * settles each on its own (a conflict or failure of one leaves the others
   * alone). The renames run on the file writer thread, as many per round trip as
   * possible; an item without staged content, or whose temporary vanished
   * (a delete or pull came first), is written afresh under the lock before
   * the items after it. A failed item's temporary is removed. Directories
   * are not fsync'ed: the caller syncs the parent of every saved file.
   */
  async commitBatch(items: readonly BatchSave[]): Promise<PromiseSettledResult<ProjectFile>[]> {
    if (!this.lock.isHeld()) throw new EngineError('internal', 'commitBatch called without the project lock');
    try {
      return await this.commitRuns(items);
    } finally {
      touchTree(this.root, ...items.map((i) => i.name));
    }
  }

  private async commitRuns(items: readonly BatchSave[]): Promise<PromiseSettledResult<ProjectFile>[]> {
    const out: PromiseSettledResult<ProjectFile>[] = [];
    const afresh = async (item: BatchSave): Promise<void> => {
      out.push(await settle(this.writeUnderLock(item.name, item.abs, item.data)));
    };
    while (out.length < items.length) {
      const from = out.length;
      let to = from;
      while (to < items.length && items[to]!.staged !== null) to++;
      const run = items.slice(from, to) as (BatchSave & { staged: StagedFile })[];
      if (run.length === 0) {
        await afresh(items[from]!);
        continue;
      }
      let replies: CommitReply[];
      try {
        replies = await commitInThread(run.map((i) => ({ temp: i.staged.temp, target: i.abs, tempMode: i.staged.stats.mode & 0o7777 })));
      } catch (err) {
        // The thread failed: nothing is known of this run; every item fails, its temporary removed.
        await Promise.all(run.map((i) => discardStaged(i.staged)));
        for (const i of run) out.push({ status: 'rejected', reason: wrap(`cannot save file ${quote(i.name)}`, err) });
        continue;
      }
      if (replies.length === 0 || (replies.length < run.length && replies.at(-1)?.kind !== 'missing')) {
        const unanswered = run.slice(replies.length);
        await Promise.all(unanswered.map((i) => discardStaged(i.staged)));
        replies = [...replies, ...unanswered.map((): CommitReply => ({ kind: 'error', op: 'rename', message: 'no answer from the file writer thread' }))];
      }
      replies.forEach((reply, k) => {
        const { name, staged } = run[k]!;
        if (reply.kind === 'ok') out.push({ status: 'fulfilled', value: fileEntry(name, staged.stats) });
        else if (reply.kind === 'directory') out.push({ status: 'rejected', reason: new EngineError('conflict', `${quote(name)} is a directory`) });
        else if (reply.kind === 'error') {
          const cause = Object.assign(new Error(reply.message), { code: reply.code });
          out.push({ status: 'rejected', reason: reply.op === 'stat' ? wrap(`cannot inspect ${run[k]!.abs}`, cause) : wrap(`cannot save file ${quote(name)}`, cause) });
        }
      });
      if (replies.at(-1)?.kind === 'missing') await afresh(run[replies.length - 1]!);
    }
    return out;
  }

  /**
   * Under the lock: renames a staged file over `name`, keeping the permission
   * bits of the file it replaces. Synchronous calls only (see
   * commitStagedSync). Null when the temporary is gone.
   */
  private commitStaged(name: string, abs: string, staged: StagedFile): ProjectFile | null {
    let current: Stats | undefined;
    try {
      current = statSync(abs, { throwIfNoEntry: false });
    } catch (err) {
      if (!isMissing(err)) throw wrap(`cannot inspect ${abs}`, err);
    }
    if (current?.isDirectory()) throw new EngineError('conflict', `${quote(name)} is a directory`);
    try {
      commitStagedSync(staged, current?.isFile() ? current.mode & 0o7777 : undefined);
    } catch (err) {
      if (isMissing(err)) return null;
      if (errno(err) === 'EISDIR') throw new EngineError('conflict', `${quote(name)} is a directory`);
      throw wrap(`cannot save file ${quote(name)}`, err);
    }
    return fileEntry(name, staged.stats);
  }

  /**
   * Starts writing `data` for the file `name` to a temporary file beside it
   * and fsyncing it, without the project lock, on the file writer thread
   * with the other stages of this event-loop turn; pass the result to `save`.
   * `abs`: `resolve(name)`, when the caller has it already. The write itself
   * never rejects (see Staging).
   */
  stage(name: string, data: Uint8Array, abs = this.resolve(name)): Staging {
    return { name, abs, file: stageInThread(abs, data).catch(() => null) };
  }

  /** Removes what `stage` wrote when the save it was for is not going to happen. */
  async discard(staging: Staging): Promise<void> {
    const staged = await staging.file;
    if (staged !== null) await discardStaged(staged);
  }

  /**
   * File-system part: removes a file, or a directory with its subtree.
   * Returns the names of the non-directory entries removed (as listed before).
   */
  async delete(name: string): Promise<string[]> {
    const abs = this.resolve(name);
    return this.withLock(async () => {
      const st = await lstatOrNull(abs);
      if (st === null) throw notFound(name);
      const removed = st.isDirectory() ? (await this.list({ prefix: `${name}/` })).filter((f) => !f.is_dir).map((f) => f.name) : [name];
      try {
        await removeEntry(abs, st.isDirectory());
      } catch (err) {
        if (isMissing(err)) throw notFound(name);
        throw wrap(`cannot delete file ${quote(name)}`, err);
      } finally {
        touchTree(this.root, name);
      }
      return removed;
    });
  }

  /**
   * File-system part: moves a file or directory subtree to `newName`,
   * creating its parents. Returns the moved entry (without body).
   */
  async rename(oldName: string, newName: string): Promise<ProjectFile> {
    const oldAbs = this.resolve(oldName);
    const newAbs = this.resolve(newName);
    if (newName.startsWith(`${oldName}/`)) throw new EngineError('bad_request', `cannot move ${quote(oldName)} into itself`);
    return this.withLock(async () => {
      if ((await lstatOrNull(oldAbs)) === null) throw notFound(oldName);
      if ((await lstatOrNull(newAbs)) !== null) throw new EngineError('conflict', `file ${quote(newName)} already exists`);
      try {
        await this.ensureDirectories(newName.split('/').slice(0, -1));
        await fsRename(oldAbs, newAbs);
      } catch (err) {
        if (err instanceof EngineError) throw err;
        throw wrap(`cannot rename file ${quote(oldName)} to ${quote(newName)}`, err);
      } finally {
        touchTree(this.root, oldName, newName);
      }
      return this.entryAfterWrite(newName, newAbs);
    });
  }

  /**
   * Creates each missing directory of the relative path `segments`; 409 on a
   * non-directory. `abs`, the absolute path of `segments`: when it already is
   * a directory, so is every prefix, and one stat answers.
   */
  private async ensureDirectories(segments: readonly string[], abs?: string): Promise<void> {
    if (abs !== undefined && (await statOrNull(abs))?.isDirectory()) return;
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

/**
 * Removes a file, or a directory with its subtree. A directory is first
 * renamed to a temporary name beside it (hidden from listings) and removed
 * from there: a save stages its temporary file beside its target before it
 * waits for the project lock (see ProjectTree.save), and one landing in a
 * directory while rm empties it would make the final rmdir fail. Once the
 * directory is moved away, a save staging into its old path finds no
 * directory and writes under the lock after this delete.
 */
async function removeEntry(abs: string, recursive: boolean): Promise<void> {
  if (!recursive) return rm(abs, { force: false });
  const trash = tempPath(path.dirname(abs));
  try {
    await fsRename(abs, trash);
  } catch (err) {
    if (isMissing(err)) throw err;
    return rm(abs, { recursive: true, force: false }); // cannot be moved (e.g. a mount point): remove in place
  }
  // A save that resolved the old path just before the move can still add a file: rm retries then.
  await rm(trash, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 });
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

async function settle<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  try {
    return { status: 'fulfilled', value: await p };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}
