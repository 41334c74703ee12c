/**
 * `is` tests nunjucks lacks or reads differently from Jinja2: `none` (null
 * or undefined: JavaScript's two Nones),
 * `boolean`, `integer`, `float`, `true`, `false`, `sequence`, and
 * `iterable` / `mapping` that accept dicts and never fail on none.
 */
import { isPlainObject, Namespace } from './py-values.js';

type Test = (value: unknown, ...args: unknown[]) => boolean;

/** An object of the host's that is a mapping in Python (dbt's Relation) says so with this symbol. */
export const MAPPING_MARK = Symbol.for('jinja.mapping');

const isMapping = (v: unknown): boolean =>
  isPlainObject(v) || v instanceof Namespace || v instanceof Map || (typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[MAPPING_MARK] === true);

export const jinjaTests: Readonly<Record<string, Test>> = {
  // A context function written in TypeScript may hand back undefined for None.
  none: (v) => v === null || v === undefined,
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  float: (v) => typeof v === 'number' && !Number.isInteger(v),
  true: (v) => v === true,
  false: (v) => v === false,
  mapping: isMapping,
  iterable: (v) => v !== null && v !== undefined && (typeof v === 'string' || isMapping(v) || typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function'),
  sequence: (v) => typeof v === 'string' || Array.isArray(v) || isMapping(v),
  string: (v) => typeof v === 'string',
};
