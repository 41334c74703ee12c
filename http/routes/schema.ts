/**
 * Superstruct pieces the project routes share: free-form `vars` maps (any
 * keys, but an object, not an array) and read-only fields a client may send
 * back from a `get` (accepted and ignored, request validation).
 */
import { record, refine, string, unknown, type Struct } from 'superstruct';

/** An object with any keys (request validation: `vars` maps are exempt from the unknown-field rule). */
export function freeMap(): Struct<Record<string, unknown>, null> {
  return refine(record(string(), unknown()), 'object', (v, ctx) => !Array.isArray(v) || `field ${JSON.stringify(ctx.path.join('.'))} must be an object`);
}

/** A read-only field: any value, ignored. */
export const readOnly = (): Struct<unknown, null> => unknown();
