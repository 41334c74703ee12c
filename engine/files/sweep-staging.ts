/**
 * Start-up sweep of staging files: every write is staged as
 * `.service-tmp-<24 hex>` beside its target and renamed over it (and a
 * deleted directory is first renamed to such a name), so a daemon killed
 * mid-write leaves these behind. Nothing else may use the prefix (client
 * file names with it are refused), so everything carrying it is garbage once
 * the data directory's lock is ours.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { isTempName } from './atomic-write.js';

/** Removes staging files and directories under `root`; returns how many entries were removed. */
export async function sweepStagingFiles(root: string): Promise<number> {
  let removed = 0;
  const dirs = [root];
  while (dirs.length > 0) {
    const dir = dirs.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // gone, or not a directory: nothing to sweep
    }
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      if (isTempName(e.name)) {
        await rm(abs, { recursive: true, force: true });
        removed++;
      } else if (e.isDirectory() && e.name.toLowerCase() !== '.git') dirs.push(abs); // symlinks are not followed
    }
  }
  return removed;
}
