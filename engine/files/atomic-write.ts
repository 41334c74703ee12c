/**
 * Atomic file replacement: the content goes to a temporary
 * file in the target's directory, is fsync'ed, then renamed over the target,
 * and the directory is fsync'ed so the rename itself survives a crash. Readers
 * see the old inode or the new one, never a mix. The temporary name has a fixed
 * length (a 255-byte target name must still leave room) and a recognisable
 * shape so listings can hide in-flight or crash-orphaned temporaries.
 *
 * The steps are also available one by one, so the project tree can write and
 * fsync a file's new content (`stageFile`) while it waits for the project
 * lock, and hold the lock only for the rename (`commitStaged`). Directory
 * fsyncs are group-committed (`syncDirectory`): callers that arrive while one
 * runs share the next one, which starts after all their renames.
 */
import { randomFillSync } from 'node:crypto';
import { chmodSync, close, fchmod, fstat, fsync, open as fsOpen, renameSync, rmSync, write, type Stats } from 'node:fs';
import { chmod, rm, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { STAGING_PREFIX as TEMP_PREFIX } from './file-name.js';
const TEMP_NAME = /^\.service-tmp-[0-9a-f]{24}$/;

/** True for a base name written by writeFileAtomic as its temporary file. */
export function isTempName(base: string): boolean {
  return TEMP_NAME.test(base);
}

/** A target's new content, written to a temporary file beside it and fsync'ed, not yet renamed. */
export interface StagedFile {
  readonly target: string;
  readonly temp: string;
  /** The temporary file's stat after the fsync: its size and mtime are the target's once renamed. */
  readonly stats: Pick<Stats, 'mode' | 'size' | 'mtime'>;
}

/** Random bytes for temporary names, drawn 12 at a time; refilled when used up. */
const pool = Buffer.alloc(12 * 256);
let poolOffset = pool.length;

/** A fresh temporary name in `dir` (hidden from listings, see isTempName). */
export function tempPath(dir: string): string {
  if (poolOffset + 12 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const name = TEMP_PREFIX + pool.toString('hex', poolOffset, poolOffset + 12);
  poolOffset += 12;
  return path.join(dir, name);
}

// The callback API, promisified: no FileHandle (see stageFile).
const openFd = promisify(fsOpen);
const fchmodFd = promisify(fchmod);
const writeFd = promisify(write);
const fsyncFd = promisify(fsync);
const fstatFd = promisify(fstat);
const closeFd = promisify(close);

/**
 * Writes `data` to a new temporary file in `target`'s directory (which must
 * exist) and fsyncs it. Plain descriptors and the callback API: each of the
 * five steps is a trip through libuv's threadpool either way, and a
 * FileHandle costs the main thread about half as much again per trip.
 */
export async function stageFile(target: string, data: Uint8Array, mode?: number): Promise<StagedFile> {
  const temp = tempPath(path.dirname(target));
  const fd = await openFd(temp, 'wx', 0o666);
  try {
    try {
      if (mode !== undefined) await fchmodFd(fd, mode);
      for (let written = 0; written < data.byteLength; ) {
        written += (await writeFd(fd, data, written, data.byteLength - written, written)).bytesWritten;
      }
      await fsyncFd(fd);
      return { target, temp, stats: await fstatFd(fd) };
    } finally {
      await closeFd(fd);
    }
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * Renames a staged file over its target, first giving it `mode` (the
 * permission bits of the file it replaces) when they differ. The temporary is
 * removed when the rename fails. The directory is not fsync'ed here.
 */
export async function commitStaged(staged: StagedFile, mode?: number): Promise<void> {
  try {
    if (mode !== undefined && mode !== (staged.stats.mode & 0o7777)) await chmod(staged.temp, mode);
    await rename(staged.temp, staged.target);
  } catch (err) {
    await discardStaged(staged);
    throw err;
  }
}

/**
 * commitStaged with synchronous calls, for a caller holding a lock that
 * others wait for: a chmod and a rename take microseconds, where a trip
 * through libuv's threadpool can wait behind several running fsyncs.
 */
export function commitStagedSync(staged: StagedFile, mode?: number): void {
  try {
    if (mode !== undefined && mode !== (staged.stats.mode & 0o7777)) chmodSync(staged.temp, mode);
    renameSync(staged.temp, staged.target);
  } catch (err) {
    rmSync(staged.temp, { force: true });
    throw err;
  }
}

/** Removes a staged file that will not be committed (a no-op once it was renamed). */
export async function discardStaged(staged: StagedFile): Promise<void> {
  await rm(staged.temp, { force: true });
}

/** Replaces (or creates) `target` with `data`; the parent directory must exist. */
export async function writeFileAtomic(target: string, data: Uint8Array): Promise<void> {
  const previousMode = await stat(target).then((s) => (s.isFile() ? s.mode & 0o7777 : undefined), () => undefined);
  await commitStaged(await stageFile(target, data, previousMode));
  await syncDirectory(path.dirname(target));
}

/** Per directory: the fsync that starts when the running one ends, shared by everyone who asked meanwhile. */
const nextSync = new Map<string, Promise<void>>();
const runningSync = new Map<string, Promise<void>>();

/**
 * Makes the renames done in `dir` before this call durable. Syncs of one
 * directory never overlap: a caller arriving while one runs joins the next,
 * so N concurrent renames cost about two directory fsyncs, not N.
 * Best effort: some platforms and file systems cannot fsync a directory.
 */
export function syncDirectory(dir: string): Promise<void> {
  const queued = nextSync.get(dir);
  if (queued) return queued; // not started yet, so it starts after this caller's rename
  const next = (runningSync.get(dir) ?? Promise.resolve()).then(() => {
    nextSync.delete(dir);
    const running = fsyncDirectory(dir);
    runningSync.set(dir, running);
    return running.finally(() => {
      if (runningSync.get(dir) === running) runningSync.delete(dir);
    });
  });
  nextSync.set(dir, next);
  return next;
}

async function fsyncDirectory(dir: string): Promise<void> {
  try {
    const fd = await openFd(dir, 'r');
    try {
      await fsyncFd(fd);
    } finally {
      await closeFd(fd);
    }
  } catch {
    // durability of the rename is then up to the file system
  }
}
