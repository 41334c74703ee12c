/**
 * What a pull changes in the project tree (remote wins),
 * as a pure function of three views: the remote commit's tree, the tree of
 * the last synced commit (null on a first pull, or when the mirror lost it),
 * and what is on disk now at each of those paths.
 *
 *   - a regular file of the remote tree that is missing locally → created;
 *     one whose local content differs (or a directory is in its place) → updated;
 *   - a regular file of the last synced tree that the remote tree no longer
 *     has and that is still a file locally → deleted;
 *   - files that were never in the repository are not looked at;
 *   - symlinks, submodules and names breaking the project-file-name rules are skipped with a reason.
 *
 * Writes and deletes are sorted by name (byte order) so results and the
 * order of work are deterministic.
 */
import { isTempName } from '../files/atomic-write.js';
import { fileNameProblem } from '../files/file-name.js';
import type { TreeEntry } from './git-mirror.js';

/**
 * A path on disk: missing, a regular file with its git blob id, something
 * else in the way (a directory, a special file: writing there fails and the
 * pull rolls back), or a name the tree refuses (e.g. through a symlink
 * leaving the root).
 */
export type LocalState =
  | { readonly kind: 'missing' }
  | { readonly kind: 'file'; readonly oid: string }
  | { readonly kind: 'other' }
  | { readonly kind: 'invalid'; readonly reason: string };

export interface PlannedWrite {
  readonly name: string;
  readonly oid: string;
  readonly created: boolean;
}

export interface PullPlan {
  readonly writes: readonly PlannedWrite[];
  readonly deletes: readonly string[];
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

const byName = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Why a tree entry is not synced, or null for a regular file with an acceptable name. */
export function skipReason(entry: TreeEntry): string | null {
  if (entry.mode === '120000') return 'symlinks are not synced';
  if (entry.mode === '160000') return 'submodules are not synced';
  if (entry.mode !== '100644' && entry.mode !== '100755') return `unsupported mode ${entry.mode}`;
  if (entry.path.includes('\uFFFD')) return 'the name is not valid UTF-8';
  const base = entry.path.slice(entry.path.lastIndexOf('/') + 1);
  if (isTempName(base)) return 'the name is reserved for temporary files';
  return fileNameProblem(entry.path);
}

/** The paths whose local state `planPull` needs: synced entries of both trees. */
export function pathsToInspect(remote: readonly TreeEntry[], base: readonly TreeEntry[] | null): string[] {
  const names = new Set<string>();
  for (const e of [...remote, ...(base ?? [])]) if (skipReason(e) === null) names.add(e.path);
  return [...names];
}

export function planPull(remote: readonly TreeEntry[], base: readonly TreeEntry[] | null, local: (name: string) => LocalState): PullPlan {
  const writes: PlannedWrite[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const inRemote = new Set<string>();
  for (const entry of remote) {
    inRemote.add(entry.path);
    const reason = skipReason(entry);
    const state = reason === null ? local(entry.path) : null;
    if (reason !== null || state?.kind === 'invalid') {
      skipped.push({ name: entry.path, reason: reason ?? (state as { reason: string }).reason });
      continue;
    }
    if (state!.kind === 'missing') writes.push({ name: entry.path, oid: entry.oid, created: true });
    else if (state!.kind === 'other' || (state!.kind === 'file' && state!.oid !== entry.oid)) writes.push({ name: entry.path, oid: entry.oid, created: false });
  }
  const deletes: string[] = [];
  for (const entry of base ?? []) {
    if (inRemote.has(entry.path) || skipReason(entry) !== null) continue;
    if (local(entry.path).kind === 'file') deletes.push(entry.path);
  }
  writes.sort((a, b) => byName(a.name, b.name));
  deletes.sort(byName);
  skipped.sort((a, b) => byName(a.name, b.name));
  return { writes, deletes, skipped };
}
