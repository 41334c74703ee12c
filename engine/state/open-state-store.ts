/**
 * Opens the state store a location names (`service serve --state`,
 * `SERVICE_STATE`): a `postgres://` / `postgresql://` URL, or a SQLite file
 * path (created with its directory on first use). Migrations run before the
 * store is returned.
 */
import { EngineError } from '../errors.js';
import { importNear } from '../lazy-import.js';
import type { StateStore, StateStoreOptions } from './store.js';

export type StateLocation = { readonly kind: 'postgres'; readonly url: string } | { readonly kind: 'sqlite'; readonly path: string };

/** Classifies a location; EngineError `unsupported SERVICE_STATE location '<v>'` for other URL schemes or an empty value. */
export function parseStateLocation(location: string): StateLocation {
  if (/^postgres(ql)?:\/\//i.test(location)) return { kind: 'postgres', url: location };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) || location.trim() === '') {
    throw new EngineError('node', `unsupported SERVICE_STATE location '${location}'`);
  }
  return { kind: 'sqlite', path: location };
}

export async function openStateStore(location: string, options: StateStoreOptions = {}): Promise<StateStore> {
  const loc = parseStateLocation(location);
  // Each backend (and its driver) loads only when a location of its kind is opened:
  // a build that never reads a watermark never loads SQLite.
  if (loc.kind === 'postgres') return (await importNear<typeof import('./postgres-store.js')>(import.meta.url, './postgres-store.js')).openPostgresStore(loc.url, options);
  return (await importNear<typeof import('./sqlite-store.js')>(import.meta.url, './sqlite-store.js')).openSqliteStore(loc.path, options);
}
