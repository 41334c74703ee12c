/**
 * The project tree as a pull compares it with a commit: each path's state
 * and, for regular files, the git blob id of its content — computed here
 * (`sha1("blob <size>\0" + content)`, or sha256 for sha256 repositories),
 * so an unchanged file costs one read and no git process.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import type { ProjectTree } from '../files/project-tree.js';
import type { LocalState } from './pull-plan.js';

/** The blob id git gives `content`; `oidLength` (40 or 64 hex digits) picks the hash. */
export function blobOid(content: Buffer, oidLength: number): string {
  const hash = createHash(oidLength === 64 ? 'sha256' : 'sha1');
  hash.update(`blob ${content.length}\0`);
  hash.update(content);
  return hash.digest('hex');
}

/** The blob id of the regular file at `abs`, or null when nothing readable is there. */
export async function fileOid(abs: string, oidLength: number): Promise<string | null> {
  try {
    return blobOid(await readFile(abs), oidLength);
  } catch {
    return null; // missing, a directory, or unreadable: not the content we look for
  }
}

export async function localState(tree: ProjectTree, name: string, oidLength: number): Promise<LocalState> {
  let abs: string;
  try {
    abs = tree.resolve(name);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'bad_request') return { kind: 'invalid', reason: err.message };
    throw err;
  }
  const st = await stat(abs).catch(() => null);
  if (st === null) return { kind: 'missing' };
  const oid = st.isFile() ? await fileOid(abs, oidLength) : null;
  return oid === null ? { kind: 'other' } : { kind: 'file', oid };
}

/** The states of many paths, read a few at a time. */
export async function localStates(tree: ProjectTree, names: readonly string[], oidLength: number): Promise<Map<string, LocalState>> {
  const out = new Map<string, LocalState>();
  const CONCURRENCY = 16;
  for (let i = 0; i < names.length; i += CONCURRENCY) {
    const chunk = names.slice(i, i + CONCURRENCY);
    const states = await Promise.all(chunk.map((n) => localState(tree, n, oidLength)));
    chunk.forEach((n, j) => out.set(n, states[j]!));
  }
  return out;
}
