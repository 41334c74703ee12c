/**
 * Job files seen from a project tree: the validation context
 * (which project files exist, what kind a defined connection has) and the
 * kind of content under a name. Content that is not valid UTF-8 is a
 * plain file: no job file format is binary.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ConnectionRegistry } from '../connections/index.js';
import { connectionKind, declaredType } from '../connections/index.js';
import { EngineError } from '../errors.js';
import type { ProjectTree } from '../files/project-tree.js';
import { classifyJobFile, validateJobFile, type JobFileContext, type JobFileValidation, type JobKind } from '../jobs/index.js';

/**
 * Largest job file the daemon reads, classifies or validates (a request body
 * is capped at 1 MiB too, so only git or the operator can place a larger one).
 * Parsing costs tens of times a file's size in memory: a 55 MB file grew the
 * daemon by gigabytes.
 */
export const MAX_JOB_FILE_BYTES = 1024 * 1024;

/** The problem of a job file over MAX_JOB_FILE_BYTES, or undefined when it is not. */
export function jobFileSizeProblem(size: number): string | undefined {
  return size > MAX_JOB_FILE_BYTES ? `job file is ${size} bytes; job files are limited to ${MAX_JOB_FILE_BYTES} bytes (1 MiB)` : undefined;
}

/** A classified kind, `null` for a plain file, or a YAML file that does not parse. */
export type FileKind = JobKind | null | 'invalid-yaml';

export function kindLabel(kind: FileKind): string {
  return kind === null ? 'plain file' : kind === 'invalid-yaml' ? 'invalid YAML' : kind;
}

function statOrNull(tree: ProjectTree, name: string) {
  try {
    return statSync(tree.resolve(name));
  } catch {
    return null; // a bad name or a missing file: either way it does not exist
  }
}

/**
 * `registry` is called once, on the first connection lookup, so validating a
 * file that names no connection (every plain file) never reads the env files.
 */
export function jobFileContext(tree: ProjectTree, registry: () => ConnectionRegistry): JobFileContext {
  let loaded: ConnectionRegistry | undefined;
  return {
    fileExists: (name) => statOrNull(tree, name) !== null,
    connectionKind: (name) => {
      loaded ??= registry();
      const c = loaded.get(name);
      return c === undefined ? undefined : connectionKind(declaredType(c));
    },
    readFile: (name) => {
      if (!statOrNull(tree, name)?.isFile()) return undefined;
      const data = readFileSync(tree.resolve(name));
      return isUtf8(data) ? data.toString('utf8') : undefined;
    },
  };
}

export function classifyContent(name: string, content: Buffer | string): FileKind {
  if (typeof content !== 'string' && !isUtf8(content)) return null;
  return classifyJobFile(name, content.toString()).kind;
}

export function validateContent(name: string, content: Buffer | string, ctx: JobFileContext): JobFileValidation {
  if (typeof content !== 'string' && !isUtf8(content)) return { kind: null, problems: [] };
  return validateJobFile(name, content.toString(), ctx);
}

/** True when validation found a job file that may not be saved (422). */
export function isRejected(v: Pick<JobFileValidation, 'kind' | 'problems'>): boolean {
  return v.kind === 'invalid-yaml' || (v.kind !== null && v.problems.length > 0);
}

/** The regular file's content, or null when nothing (or a directory) is at `name`. */
export async function readContent(tree: ProjectTree, name: string): Promise<Buffer | null> {
  const entry = await tree.stat(name);
  if (entry === null || entry.is_dir) return null;
  try {
    return await readFile(tree.resolve(name));
  } catch {
    return null; // removed or replaced by a directory since the stat
  }
}

/**
 * readContent for a holder of the project lock, with synchronous calls: a
 * job file is small, and a read through libuv's threadpool would wait behind
 * the fsyncs of the saves queued for the lock (ProjectTree.save).
 */
export function readContentSync(tree: ProjectTree, name: string): Buffer | null {
  const abs = tree.resolve(name);
  let isFile: boolean;
  try {
    isFile = statSync(abs).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new EngineError('internal', `cannot inspect file ${JSON.stringify(name)}`, err);
  }
  if (!isFile) return null;
  try {
    return readFileSync(abs);
  } catch {
    return null; // removed or replaced by a directory since the stat
  }
}
