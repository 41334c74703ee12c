/**
 * Atomic file replacement (spec api.md §2.8): the content goes to a temporary
 * file in the target's directory, is fsync'ed, then renamed over the target,
 * and the directory is fsync'ed so the rename itself survives a crash. Readers
 * see the old inode or the new one, never a mix. The temporary name has a fixed
 * length (a 255-byte target name must still leave room) and a recognisable
 * shape so listings can hide in-flight or crash-orphaned temporaries.
 */
import { randomBytes } from 'node:crypto';
import { open, rm, rename, stat } from 'node:fs/promises';
import path from 'node:path';

const TEMP_PREFIX = '.service-tmp-';
const TEMP_NAME = /^\.service-tmp-[0-9a-f]{24}$/;

/** True for a base name written by writeFileAtomic as its temporary file. */
export function isTempName(base: string): boolean {
  return TEMP_NAME.test(base);
}

/** Replaces (or creates) `target` with `data`; the parent directory must exist. */
export async function writeFileAtomic(target: string, data: Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  const tmp = path.join(dir, TEMP_PREFIX + randomBytes(12).toString('hex'));
  const previousMode = await stat(target).then((s) => (s.isFile() ? s.mode & 0o7777 : undefined), () => undefined);
  const fh = await open(tmp, 'wx', 0o666);
  try {
    try {
      if (previousMode !== undefined) await fh.chmod(previousMode);
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDirectory(dir);
}

/** Best effort: some platforms and file systems cannot fsync a directory. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // durability of the rename is then up to the file system
  }
}
