/**
 * Project-file references in job files: `file://<path>` values,
 * a replication step's `path` and a build step's `build` name files of the
 * project tree and must exist when the job file is saved. A name that breaks
 * the project-file-name rules (absolute, `..`, backslash, …) cannot name a project
 * file, so it is reported as missing without asking the injected callback —
 * the callback never sees a path that could leave the project root.
 */
import { isRunTimeValue, quote, type Scope } from './fields.js';
import type { PathSeg } from './problem.js';

export const FILE_PREFIX = 'file://';

/** The path of a `file://` value, or undefined for any other string. */
export function fileRefPath(value: string): string | undefined {
  return value.startsWith(FILE_PREFIX) ? value.slice(FILE_PREFIX.length) : undefined;
}

/** Shape rules that need no file system; `dir` allows one trailing `/`. */
export function isProjectFileName(name: string, dir = false): boolean {
  const n = dir && name.length > 1 && name.endsWith('/') ? name.slice(0, -1) : name;
  if (n === '' || Buffer.byteLength(n) > 1024) return false;
  if (n.startsWith('/') || /^[A-Za-z]:/.test(n) || n.includes('\\') || n.includes('\0')) return false;
  return n.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && seg !== '.git' && Buffer.byteLength(seg) <= 255);
}

/**
 * Reports `file "<path>" does not exist` unless `name` is a well-formed,
 * existing project file (or directory when `dir`). Values resolved at run
 * time are not checked. Returns true when the file is known to exist.
 */
export function checkProjectFile(s: Scope, name: string, path: readonly PathSeg[], offset: number, dir = false): boolean {
  if (isRunTimeValue(name)) return false;
  const clean = dir && name.length > 1 && name.endsWith('/') ? name.slice(0, -1) : name;
  if (isProjectFileName(name, dir) && s.ctx.fileExists(clean)) return true;
  s.problems.add(path, `file ${quote(name)} does not exist`, offset);
  return false;
}
