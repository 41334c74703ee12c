/**
 * File connections (`type: file` connections and file streams): the root
 * directory of a `file://` URL, and the files a stream key stands for — one
 * path, every file below a folder (`dir/`), or the files matching a glob
 * (`*` and `?` never cross `/`). Paths never leave the root.
 */
import { readdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { FileConnection } from '../connections/connection.js';
import { EngineError } from '../errors.js';
import { isFolderKey, isWildcardKey, wildcardMatches } from '../jobs/replication-model.js';
import type { FileEntry, FileFormat } from './plan-types.js';
import { fileExtension } from './object-template.js';

/** The directory a file connection's URL names. */
export function fileRoot(conn: FileConnection): string {
  const url = conn.url.trim();
  if (url.startsWith('file:///')) return fileURLToPath(url);
  if (url.startsWith('file://')) return resolve(decodeURIComponent(url.slice('file://'.length)));
  return resolve(url);
}

/** `relativePath` under `root`, refusing anything that would leave it. */
export function underRoot(root: string, relativePath: string): string {
  const abs = resolve(root, relativePath);
  const rel = relative(root, abs);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new EngineError('node', `path "${relativePath}" leaves the connection root`);
  return abs;
}

async function entry(root: string, abs: string): Promise<FileEntry> {
  const s = await stat(abs);
  return { path: abs, relative: relative(root, abs).split(sep).join('/'), mtimeMs: s.mtimeMs, size: s.size };
}

async function walk(root: string, dir: string, out: FileEntry[]): Promise<void> {
  const items = await readdir(dir, { withFileTypes: true });
  for (const item of items.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (item.name.startsWith('.')) continue;
    const abs = resolve(dir, item.name);
    if (item.isDirectory()) await walk(root, abs, out);
    else if (item.isFile()) out.push(await entry(root, abs));
  }
}

async function glob(root: string, pattern: string): Promise<FileEntry[]> {
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  const out: FileEntry[] = [];
  const visit = async (dir: string, i: number): Promise<void> => {
    const seg = segments[i]!;
    const last = i === segments.length - 1;
    let items;
    try {
      items = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const item of items) {
      if (item.name.startsWith('.') || !wildcardMatches(seg, item.name)) continue;
      const abs = resolve(dir, item.name);
      if (last && item.isFile()) out.push(await entry(root, abs));
      else if (!last && item.isDirectory()) await visit(abs, i + 1);
    }
  };
  if (segments.length > 0) await visit(root, 0);
  return out.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
}

/** The files `key` stands for under `root` (an empty list for a glob or folder without matches). */
export async function listFiles(root: string, key: string): Promise<FileEntry[]> {
  if (isFolderKey(key)) {
    const dir = underRoot(root, key);
    const out: FileEntry[] = [];
    try {
      await walk(root, dir, out);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return out;
  }
  if (isWildcardKey(key)) {
    underRoot(root, key.replace(/[*?]/g, 'x'));
    return glob(root, key);
  }
  const abs = underRoot(root, key);
  try {
    return [await entry(root, abs)];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

const FORMAT_BY_EXT: Readonly<Record<string, FileFormat>> = {
  csv: 'csv', tsv: 'csv', txt: 'csv', json: 'json', jsonl: 'jsonlines', ndjson: 'jsonlines', parquet: 'parquet', pq: 'parquet',
};

/** A format from a file name's extension (`a.csv.gz` → csv); undefined when unknown. */
export function formatFromName(name: string): FileFormat | undefined {
  return FORMAT_BY_EXT[fileExtension(name).toLowerCase()];
}

/** Canonical extension of a format, for numbered parts and defaults. */
export function extensionOf(format: FileFormat): string {
  return format === 'jsonlines' ? 'jsonl' : format;
}
