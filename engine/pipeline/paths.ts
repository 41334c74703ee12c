/**
 * Project-file and file-connection paths of pipeline steps (the project-file-name
 * rules): a name must pass the project-file shape rules and stay under its
 * root once resolved (symlinks included), so no step reads or writes outside
 * the project tree or the connection's directory.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConnectionRegistry } from '../connections/index.js';
import { EngineError } from '../errors.js';
import { isProjectFileName } from '../jobs/index.js';

const quote = (s: string): string => JSON.stringify(s);

/** The deepest existing ancestor of `p`, resolved through symlinks. */
function realAncestor(p: string): string {
  let cur = p;
  for (;;) {
    try {
      return path.join(realpathSync(cur), path.relative(cur, p));
    } catch {
      const up = path.dirname(cur);
      if (up === cur) return p;
      cur = up;
    }
  }
}

function inside(root: string, p: string): boolean {
  const r = realAncestor(root);
  const rel = path.relative(r, realAncestor(p));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The absolute path of project file (or directory) `name`; `file "<name>" does not exist` shapes are refused. */
export function projectPath(root: string, name: string, what = 'file'): string {
  const clean = name.length > 1 && name.endsWith('/') ? name.slice(0, -1) : name;
  if (clean === '.' || clean === '') return root;
  const abs = path.join(root, clean);
  if (!isProjectFileName(clean) || !inside(root, abs)) throw new EngineError('node', `${what} ${quote(name)} is not a project path`);
  return abs;
}

export interface ConnectionFile {
  readonly connection: string;
  /** Absolute path of the file. */
  readonly abs: string;
  /** The connection's root directory. */
  readonly root: string;
}

/** `CONNECTION/path` on a file connection (write `to`, read `from`). */
export function connectionFile(connections: ConnectionRegistry, ref: string, key: string): ConnectionFile {
  const m = /^([^/]+)\/(.+)$/.exec(ref);
  if (m === null) throw new EngineError('node', `${quote(key)} must be CONNECTION/path, got ${quote(ref)}`);
  const [, name, rel] = m as unknown as [string, string, string];
  const conn = connections.get(name);
  if (conn === undefined) throw new EngineError('node', `connection ${name} not found`);
  if (conn.type !== 'file') throw new EngineError('node', `connection ${name} must be a file connection`);
  let root: string;
  if (conn.url.startsWith('file://')) root = fileURLToPath(conn.url);
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(conn.url)) root = path.resolve(conn.url);
  else throw new EngineError('node', `connection ${name}: only local file connections (file://) are supported`);
  const abs = path.resolve(root, rel);
  if (rel.split('/').some((s) => s === '..') || !inside(root, abs)) throw new EngineError('node', `path ${quote(rel)} leaves the root of connection ${name}`);
  return { connection: name, abs, root };
}
