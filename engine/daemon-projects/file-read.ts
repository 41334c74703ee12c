/**
 * Reading one project file for an answer: a small file comes whole (a File
 * with its body); a large one comes as its entry and path, for the caller to
 * stream (http/file-stream.ts). Reading, decoding and encoding 55 MB at once
 * held the event loop for seconds and the whole body in memory three times.
 */
import type { ProjectFile } from '../files/file-entry.js';
import { fileNotFound } from './project-errors.js';
import type { ProjectScope } from './project-scope.js';

/** Files larger than this are streamed, not read whole. */
export const STREAM_FILE_BYTES = 1024 * 1024;

export type FileForReading = { readonly whole: ProjectFile } | { readonly large: ProjectFile; readonly path: string };

export async function fileForReading(p: ProjectScope, name: string): Promise<FileForReading> {
  const abs = p.tree.resolve(name);
  const entry = await p.tree.stat(name);
  if (entry === null) throw fileNotFound(name);
  if (entry.is_dir || entry.size <= STREAM_FILE_BYTES) return { whole: await p.tree.get(name) };
  return { large: entry, path: abs };
}
