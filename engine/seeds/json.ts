/**
 * JSON seeds: a JSON array of objects, one object, or
 * newline-delimited objects, turned into the same typed table as a CSV seed.
 * Columns are the union of keys in first-seen order; a key missing from an
 * object is NULL. Types follow the JSON kinds: integers → integer, other
 * numbers → float, booleans → boolean, objects/arrays → json, strings → text
 * unless every string in the column is a date, a timestamp or a timestamptz
 * (the seed type-inference patterns). Any other mixture is text, with non-strings written as
 * their JSON text.
 *
 * "JSON integer" is lexical (`1` but not `1.0`) where the runtime exposes a
 * number's source text to JSON.parse revivers (Node ≥ 21); on Node 20 the
 * parsed value decides (`1.0` counts as an integer, integers beyond 2^53 are
 * floats because their digits are already lost).
 */
import { classifyValue, temporalKind, typeForKinds, kindBit, type LogicalType, type SeedTable } from './infer.js';
import { seedError } from './seed-error.js';

type JsonObject = Record<string, unknown>;

/** Number source texts per holder object, filled by the reviver when supported. */
type Sources = WeakMap<object, Map<string, string>>;

const HAS_SOURCE_TEXT: boolean = (() => {
  let seen: unknown;
  JSON.parse('1.0', (_key: string, value: unknown, context?: { source?: string }) => {
    seen = context?.source;
    return value;
  });
  return seen === '1.0';
})();

function parseWithSources(text: string, sources: Sources): unknown {
  if (!HAS_SOURCE_TEXT) return JSON.parse(text);
  return JSON.parse(text, function (this: object, key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number' && context?.source !== undefined) {
      let perHolder = sources.get(this);
      if (perHolder === undefined) sources.set(this, (perHolder = new Map()));
      perHolder.set(key, context.source);
    }
    return value;
  });
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The top-level values of the document: array elements, one object, or NDJSON lines. */
function documents(name: string, text: string, sources: Sources): unknown[] {
  let whole: unknown;
  try {
    whole = parseWithSources(text, sources);
  } catch (err) {
    if (text.trimStart().startsWith('[')) throw seedError(name, `invalid JSON: ${(err as Error).message}`);
    return ndjson(name, text, sources);
  }
  return Array.isArray(whole) ? whole : [whole];
}

function ndjson(name: string, text: string, sources: Sources): unknown[] {
  const values: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    try {
      values.push(parseWithSources(line, sources));
    } catch (err) {
      throw seedError(name, `line ${i + 1}: invalid JSON: ${(err as Error).message}`);
    }
  }
  return values;
}

// Kind bits for JSON values; strings additionally carry their temporal kind (date, timestamp).
const INT = 1;
const FLOAT = 2;
const BOOL = 4;
const STRING = 8;
const JSON_VALUE = 16;
const UNTYPED = 32; // a number JSON.parse turned into ±Infinity: keep its text

function numberText(holder: JsonObject, key: string, value: number, sources: Sources): string {
  return sources.get(holder)?.get(key) ?? String(value);
}

function numberBit(text: string, value: number): number {
  if (!Number.isFinite(value)) return UNTYPED;
  if (HAS_SOURCE_TEXT) return classifyValue(text) === 'integer' ? INT : FLOAT;
  return Number.isSafeInteger(value) ? INT : FLOAT;
}

function columnType(mask: number, stringKinds: number): LogicalType {
  switch (mask) {
    case 0:
      return 'text';
    case INT:
      return 'integer';
    case FLOAT:
    case INT | FLOAT:
      return 'float';
    case BOOL:
      return 'boolean';
    case JSON_VALUE:
      return 'json';
    case STRING: {
      const t = typeForKinds(stringKinds);
      return t === 'date' || t === 'timestamp' || t === 'timestamptz' ? t : 'text';
    }
    default:
      return 'text';
  }
}

/** Text rendering of one non-NULL value: strings as-is, anything else as its JSON text. */
function render(holder: JsonObject, key: string, value: unknown, sources: Sources): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return numberText(holder, key, value, sources);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

/** Parses a JSON seed's text into a typed table; errors name the seed. */
export function parseJsonSeed(name: string, text: string): SeedTable {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (src.trim() === '') throw seedError(name, 'file is empty');
  const sources: Sources = new WeakMap();
  const objects = documents(name, src, sources);

  const keys: string[] = [];
  const index = new Map<string, number>();
  const masks: number[] = [];
  const stringKinds: number[] = [];
  for (const obj of objects) {
    if (!isObject(obj)) throw seedError(name, 'expected JSON objects');
    for (const key of Object.keys(obj)) {
      let i = index.get(key);
      if (i === undefined) {
        i = keys.length;
        index.set(key, i);
        keys.push(key);
        masks.push(0);
        stringKinds.push(0);
      }
      const value = obj[key];
      if (value === null) continue;
      if (typeof value === 'string') {
        masks[i] |= STRING;
        stringKinds[i] |= kindBit(temporalKind(value) ?? 'text');
      } else if (typeof value === 'number') {
        masks[i] |= numberBit(numberText(obj, key, value, sources), value);
      } else if (typeof value === 'boolean') {
        masks[i] |= BOOL;
      } else {
        masks[i] |= JSON_VALUE;
      }
    }
  }
  if (keys.length === 0) throw seedError(name, 'no columns: a JSON seed needs at least one key');

  const names = keys.map((k, i) => (k === '' ? `column_${i + 1}` : k));
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw seedError(name, `duplicate column '${n}'`);
    seen.add(n);
  }

  const rows = (objects as JsonObject[]).map((obj) =>
    keys.map((key) => {
      if (!Object.hasOwn(obj, key)) return null;
      const value = obj[key];
      return value === null ? null : render(obj, key, value, sources);
    }),
  );
  return { columns: names.map((n, i) => ({ name: n, type: columnType(masks[i], stringKinds[i]) })), rows };
}
