/**
 * The File resource and the conversions of its `body`:
 * content is served as UTF-8 text when the bytes are valid UTF-8, otherwise as
 * base64 with `encoding: "base64"`; saves accept either form. Timestamps follow
 * (RFC 3339 UTC with milliseconds).
 */
import { isUtf8 } from 'node:buffer';
import type { Stats } from 'node:fs';
import { EngineError } from '../errors.js';

export interface ProjectFile {
  readonly name: string;
  /** Present only when asked for (get, list with include_body); "" for directories. */
  readonly body?: string;
  /** Present only when `body` is base64 because the content is not valid UTF-8. */
  readonly encoding?: 'base64';
  readonly is_dir: boolean;
  readonly updated: string;
  readonly size: number;
}

/** A directory entry (body "" when `withBody`). */
export function directoryEntry(name: string, st: Stats, withBody: boolean): ProjectFile {
  return withBody ? { name, body: '', is_dir: true, updated: st.mtime.toISOString(), size: 0 } : { name, is_dir: true, updated: st.mtime.toISOString(), size: 0 };
}

/** A regular-file entry; `content` given → body (and encoding) included. */
export function fileEntry(name: string, st: Pick<Stats, 'mtime' | 'size'>, content?: Buffer): ProjectFile {
  const updated = st.mtime.toISOString();
  if (content === undefined) return { name, is_dir: false, updated, size: st.size };
  if (isUtf8(content)) return { name, body: content.toString('utf8'), is_dir: false, updated, size: content.length };
  return { name, body: content.toString('base64'), encoding: 'base64', is_dir: false, updated, size: content.length };
}

/** The bytes a save writes: UTF-8 of `body`, or its strict base64 decoding. */
export function decodeBody(body: string, encoding: 'base64' | undefined): Buffer {
  if (encoding !== 'base64') return Buffer.from(body, 'utf8');
  // Buffer.from(…, 'base64') silently skips junk, so check the alphabet first.
  const compact = body.replace(/[\t\n\r ]/g, '');
  const padded = /^[A-Za-z0-9+/]*={0,2}$/.test(compact) && (compact.includes('=') ? compact.length % 4 === 0 : compact.length % 4 !== 1);
  if (!padded) throw new EngineError('bad_request', 'body must be valid base64');
  return Buffer.from(compact, 'base64');
}
