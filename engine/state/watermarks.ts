/**
 * Incremental watermarks: one row per (target connection,
 * model full name) holding the literal text of the last loaded bound and
 * when it was written. `SERVICE_STATE` names the store: a SQLite file path
 * (created on first use, WAL) or a `postgres://` / `postgresql://` URL.
 *
 * The rows live in the state store's `service_build_watermarks` table, so a
 * build and a daemon pointed at the same location share one schema and one
 * migration path. The store is opened (and migrated) on first use, once per
 * thread and location, and kept for the process.
 */
import { openStateStore, parseStateLocation } from './open-state-store.js';
import type { StateStore, Watermark } from './store.js';

export type { Watermark } from './store.js';

export interface WatermarkStore {
  get(target: string, model: string): Promise<Watermark | undefined>;
  set(target: string, model: string, value: string): Promise<void>;
}

const stores = new Map<string, WatermarkStore>();

/** The store `SERVICE_STATE` names; `unsupported SERVICE_STATE location '<v>'` for other forms. */
export function watermarkStore(location: string): WatermarkStore {
  let s = stores.get(location);
  if (s) return s;
  parseStateLocation(location);
  let opening: Promise<StateStore> | undefined;
  // A failed open is not cached: the next call tries again.
  const store = () =>
    (opening ??= openStateStore(location, { poolMax: 1 }).catch((err: unknown) => {
      opening = undefined;
      throw err;
    }));
  s = {
    async get(target, model) {
      return (await store()).getWatermark(target, model);
    },
    async set(target, model, value) {
      await (await store()).setWatermark(target, model, value);
    },
  };
  stores.set(location, s);
  return s;
}
