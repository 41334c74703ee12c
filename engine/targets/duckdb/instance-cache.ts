/**
 * One `DuckDBInstance` per database file per process: opening
 * the same file twice in one process silently loses data, so every target,
 * seed, sub-project and state probe that names a file gets the same instance.
 * Keys are absolute paths with symlinked directories resolved; `:memory:` is
 * one shared in-memory database per process.
 *
 * The cache only guarantees one instance. DuckDB has one writer per file:
 * the caller (the DuckDB actor) must serialize all work on a file, and
 * sessions here assume no concurrent use.
 *
 * The DuckDB addon is loaded on the first open, not on import: processes and
 * worker threads that only talk to PostgreSQL never pay for it.
 */
import type { DuckDBInstance } from '@duckdb/node-api';
import { realpathSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

const instances = new Map<string, Promise<DuckDBInstance>>();
/** Instances created per key by this thread, ever (the DuckDB actor reports it; tests check it stays 1). */
const opens = new Map<string, number>();

/** How many instances of `path` this thread has created. */
export function duckdbOpenCount(path: string): number {
  return opens.get(instanceKey(path)) ?? 0;
}

/** The cache key for `path`: `:memory:`, or the absolute path through any directory symlinks. */
export function instanceKey(path: string): string {
  if (path === ':memory:') return path;
  const abs = resolve(path);
  try {
    return resolve(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs; // directory does not exist yet: DuckDB will report it on open
  }
}

/** The shared instance for `path`, created on first use; a failed open is not cached. */
export function duckdbInstance(path: string): Promise<DuckDBInstance> {
  const key = instanceKey(path);
  let pending = instances.get(key);
  if (pending === undefined) {
    pending = import('@duckdb/node-api').then(({ DuckDBInstance }) => DuckDBInstance.create(key));
    instances.set(key, pending);
    opens.set(key, (opens.get(key) ?? 0) + 1);
    pending.catch(() => {
      if (instances.get(key) === pending) instances.delete(key);
    });
  }
  return pending;
}

/** Closes and forgets the instance for `path` (all its connections must be closed). */
export async function closeDuckdbInstance(path: string): Promise<void> {
  const key = instanceKey(path);
  const pending = instances.get(key);
  instances.delete(key);
  if (pending !== undefined) (await pending.catch(() => undefined))?.closeSync();
}

/** Closes every cached instance: process shutdown. */
export async function closeAllDuckdbInstances(): Promise<void> {
  await Promise.all([...instances.keys()].map((key) => closeDuckdbInstance(key)));
}
