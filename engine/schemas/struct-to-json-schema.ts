/**
 * A superstruct struct → a JSON Schema (draft 2020-12), for the shapes in
 * shape.ts: object (closed) and type (open, unless closedForEditors) mappings, optional and nullable
 * fields, string, number, integer, boolean, enums, literal, array, unions
 * and records noted by shape.ts, unknown/any. Anything else is an error, so
 * a shape cannot silently produce a schema that accepts everything.
 */
import { is, type Struct } from 'superstruct';
import { NOTES } from './shape.js';

export type JsonSchema = { [key: string]: unknown };

export function structToJsonSchema(s: Struct<any, any>): JsonSchema {
  const note = NOTES.get(s);
  const base = convert(s);
  const nullableToo = s.type !== 'unknown' && s.type !== 'any' && is(null, s);
  const out = nullableToo ? { anyOf: [base, { type: 'null' }] } : base;
  return note?.description ? { description: note.description, ...out } : out;
}

function convert(s: Struct<any, any>): JsonSchema {
  const note = NOTES.get(s);
  switch (s.type) {
    case 'string':
      if (note?.allowed) return { type: 'string', enum: [...note.allowed] };
      return note?.pattern ? { type: 'string', pattern: note.pattern.source } : { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'integer':
      return { type: 'integer' };
    case 'boolean':
      return { type: 'boolean' };
    case 'unknown':
    case 'any':
      return {};
    case 'literal':
      return { const: s.schema };
    case 'enums':
      return { enum: Object.values(s.schema as Record<string, unknown>) };
    case 'array':
      return { type: 'array', items: s.schema ? structToJsonSchema(s.schema as Struct<any, any>) : {} };
    case 'object':
    case 'type': {
      const fields = (s.schema ?? {}) as Record<string, Struct<any, any>>;
      const required = Object.keys(fields).filter((k) => !is(undefined, fields[k]!));
      return {
        type: 'object',
        properties: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, structToJsonSchema(f)])),
        ...(required.length > 0 ? { required } : {}),
        additionalProperties: s.type === 'type' && note?.closed !== true,
      };
    }
    case 'union':
      if (!note?.members) throw new Error('a union in a shape must be made with oneOf() so its members are known');
      return { anyOf: note.members.map(structToJsonSchema) };
    case 'record':
      if (!note?.values) throw new Error('a record in a shape must be made with mapOf() so its values are known');
      return { type: 'object', ...(note.pattern ? { propertyNames: { pattern: note.pattern.source } } : {}), additionalProperties: structToJsonSchema(note.values) };
    default:
      throw new Error(`no JSON Schema for a superstruct "${s.type}" struct`);
  }
}
