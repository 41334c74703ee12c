/**
 * OpenAPI 3.1 generated from the route table and its superstruct schemas
 * Each body schema is walked into JSON Schema, so the
 * published contract is the one the validator enforces.
 */
import type { Struct } from 'superstruct';
import type { Route } from './route.js';

type JsonSchema = Record<string, unknown>;

/** JSON Schema for a superstruct struct (the kinds our schemas use). */
export function toJsonSchema(struct: Struct<any, any>): JsonSchema {
  const s = struct as unknown as { type: string; schema: unknown };
  switch (s.type) {
    case 'string':
      return { type: 'string' };
    case 'integer':
      return { type: 'integer' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'enums':
      return { type: 'string', enum: Object.keys(s.schema as object) };
    case 'array':
      return { type: 'array', items: s.schema ? toJsonSchema(s.schema as Struct<any, any>) : {} };
    case 'record':
      return { type: 'object', additionalProperties: true };
    case 'object':
    case 'type': {
      const props = s.schema as Record<string, Struct<any, any>>;
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [k, v] of Object.entries(props)) {
        properties[k] = toJsonSchema(v);
        if (!isOptional(v)) required.push(k);
      }
      return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: s.type === 'type' };
    }
    case 'union':
      return { anyOf: (s.schema as Struct<any, any>[]).map(toJsonSchema) };
    default:
      return {};
  }
}

function isOptional(struct: Struct<any, any>): boolean {
  const [err] = (struct as unknown as { validate(v: unknown): [unknown] }).validate(undefined);
  return !err;
}

const ERROR = { type: 'object', properties: { error: { type: 'string' }, code: { type: 'string' } }, required: ['error', 'code'] };

export function openApiDocument(routes: readonly Route[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const op: Record<string, unknown> = {
      summary: r.summary,
      ...(r.auth ? { security: [{ projectToken: [] }] } : {}),
      ...(r.query ? { parameters: r.query.map((q) => ({ name: q.name, in: 'query', required: q.required ?? false, description: q.description, schema: { type: 'string' } })) } : {}),
      ...(r.body ? { requestBody: { required: false, content: { 'application/json': { schema: toJsonSchema(r.body) } } } } : {}),
      responses: {
        200: { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
        default: { description: 'Error', content: { 'application/json': { schema: ERROR } } },
      },
    };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'service project API', version },
    components: { securitySchemes: { projectToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Service-Project-Token <token>' } } },
    paths,
  };
}
