/**
 * Stream expansion: each key of the file
 * becomes the streams it stands for. A database wildcard (`public.*`,
 * `public.prefix_*`) expands to the matching tables of the source, sorted by
 * name; a file glob to the matching files, sorted by path; a folder key is
 * one stream over every file below it. An explicit key wins over a wildcard
 * that also matches it, and a name matched by two wildcards goes to the
 * first. The catalog is injected, so expansion itself is pure.
 */
import { EngineError } from '../errors.js';
import {
  effectiveSettings, isFolderKey, isWildcardKey, wildcardMatches, type ReplicationFile, type StreamSettings,
} from '../jobs/replication-model.js';
import type { FileEntry } from './plan-types.js';

export interface SourceCatalog {
  /** Tables and views of a source schema (names only). */
  tables(schema: string): Promise<readonly string[]>;
  /** Files of a file connection for a key: one path, a folder (`dir/`) or a glob. */
  files(key: string): Promise<readonly FileEntry[]>;
}

export type ExpandedSource =
  | { readonly kind: 'table'; readonly schema: string; readonly table: string }
  | { readonly kind: 'sql' }
  | { readonly kind: 'files'; readonly files: readonly FileEntry[]; readonly filePath: string };

export interface ExpandedStream {
  /** Stream key after expansion. */
  readonly name: string;
  /** The key as written. */
  readonly key: string;
  /** The stream's own settings (defaults not applied). */
  readonly settings: StreamSettings;
  readonly source: ExpandedSource;
}

export type SourceKind = 'database' | 'file';

/** `schema.table` → parts; a bare name is a table of `defaultSchema`. */
export function splitTableKey(key: string, defaultSchema: string): { schema: string; table: string } {
  const dot = key.indexOf('.');
  return dot < 0 ? { schema: defaultSchema, table: key } : { schema: key.slice(0, dot), table: key.slice(dot + 1) };
}

async function expandDatabaseWildcard(key: string, defaultSchema: string, catalog: SourceCatalog): Promise<string[]> {
  const { schema } = splitTableKey(key, defaultSchema);
  if (isWildcardKey(schema)) throw new EngineError('node', `stream "${key}": wildcards are supported in the table part only (schema.*)`);
  const pattern = key.includes('.') ? key : `${schema}.${key}`;
  const names = (await catalog.tables(schema)).map((t) => `${schema}.${t}`).filter((n) => wildcardMatches(pattern, n));
  return names.sort();
}

export async function expandStreams(file: ReplicationFile, kind: SourceKind, defaultSchema: string, catalog: SourceCatalog): Promise<ExpandedStream[]> {
  const explicit = new Set(file.streams.filter((s) => !isWildcardKey(s.key)).map((s) => s.key));
  const seen = new Set<string>();
  const out: ExpandedStream[] = [];
  const push = (s: ExpandedStream) => {
    if (seen.has(s.name)) return;
    seen.add(s.name);
    out.push(s);
  };
  for (const stream of file.streams) {
    const { key, settings } = stream;
    const eff = effectiveSettings(file.defaults, settings);
    if (kind === 'file') {
      if (isFolderKey(key)) {
        push({ name: key, key, settings, source: { kind: 'files', files: await catalog.files(key), filePath: key.slice(0, -1) } });
      } else if (isWildcardKey(key)) {
        for (const f of [...(await catalog.files(key))].sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0))) {
          if (!explicit.has(f.relative)) push({ name: f.relative, key, settings, source: { kind: 'files', files: [f], filePath: f.relative } });
        }
      } else {
        push({ name: key, key, settings, source: { kind: 'files', files: await catalog.files(key), filePath: key } });
      }
      continue;
    }
    if (eff.sql !== undefined && !isWildcardKey(key)) {
      push({ name: key, key, settings, source: { kind: 'sql' } });
    } else if (isWildcardKey(key)) {
      for (const name of await expandDatabaseWildcard(key, defaultSchema, catalog)) {
        if (!explicit.has(name)) push({ name, key, settings, source: { kind: 'table', ...splitTableKey(name, defaultSchema) } });
      }
    } else {
      push({ name: key, key, settings, source: { kind: 'table', ...splitTableKey(key, defaultSchema) } });
    }
  }
  return out;
}

/**
 * The job's `streams` subset: a stream runs when the subset is
 * empty, names it, or names the wildcard key it came from.
 */
export function selectStreams(streams: readonly ExpandedStream[], subset: readonly string[]): ExpandedStream[] {
  if (subset.length === 0) return [...streams];
  const wanted = new Set(subset);
  return streams.filter((s) => wanted.has(s.name) || wanted.has(s.key));
}
