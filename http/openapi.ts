/**
 * OpenAPI 3.1 generated from the route table and its superstruct schemas
 * Each body schema is walked into JSON Schema, so the
 * published contract is the one the validator enforces.
 */
import type { Struct } from 'superstruct';
import { RESOURCE_SCHEMAS, RESPONSE_SCHEMAS } from './response-schemas.js';
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
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

/** `/project/file/save` → `projectFileSave`: one operation per path, so the path names it. */
export function operationId(path: string): string {
  const words = path.replace(/\.json$/, '').split(/[/_-]/).filter((w) => w !== '');
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

export function openApiDocument(routes: readonly Route[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const body = r.body ? toJsonSchema(r.body) : undefined;
    const op: Record<string, unknown> = {
      operationId: operationId(r.path),
      summary: r.summary,
      // Public routes say so explicitly: the document's default is the project token.
      security: r.auth ? [{ projectToken: [] }] : r.operator ? [{ operatorToken: [] }] : [],
      ...(r.query ? { parameters: r.query.map((q) => ({ name: q.name, in: 'query', required: q.required ?? false, description: q.description, schema: { type: 'string' } })) } : {}),
      ...(body ? { requestBody: { required: Array.isArray(body.required) && body.required.length > 0, content: { 'application/json': { schema: body } } } } : {}),
      responses: {
        200: { description: 'OK', content: { 'application/json': { schema: RESPONSE_SCHEMAS[r.path] ?? { type: 'object' } } } },
        400: errorResponse('Bad request: malformed JSON, a body nested too deeply, an unknown, missing or mistyped field, a bad query parameter'),
        ...(r.auth ? { 401: errorResponse('Missing or invalid project token'), 429: errorResponse('Too many failed authentications from this address in a minute; `Retry-After` says when to retry') } : {}),
        ...(r.operator ? { 401: errorResponse('Missing or invalid operator token') } : {}),
        ...(r.method === 'POST' ? { 413: errorResponse('Request body over 1 MiB or with more than 10,000 fields') } : {}),
        ...(r.path === '/health' ? { 503: errorResponse('Starting (`status: starting`), or the state store did not answer a read within 1 s (`status: unavailable`)') } : {}),
        ...(r.auth ? { 404: errorResponse('Not found (objects of other projects behave as missing ones)'), 409: errorResponse('Conflict with the current state') } : {}),
        ...(r.path === '/project/file/save' || r.path === '/project/file/rename' ? { 422: errorResponse('Invalid job file: `problems` lists each with its line and column') } : {}),
        default: errorResponse('Error'),
      },
    };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  const operator = routes.some((r) => r.operator);
  return {
    openapi: '3.1.0',
    info: { title: 'service project API', version, description: 'The HTTP API of `service serve`.', license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    security: [{ projectToken: [] }],
    components: {
      securitySchemes: {
        projectToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Service-Project-Token <token>' },
        // Only a daemon serving the operator routes (cluster mode) documents their token.
        ...(operator ? { operatorToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Service-Operator-Token <token> (cluster mode: `service cluster token`)' } } : {}),
      },
      schemas: usedSchemas(paths, { Error: ERROR, ...RESOURCE_SCHEMAS }),
    },
    paths,
  };
}

/**
 * The component schemas the paths refer to, directly or through another
 * schema: a daemon without cluster mode serves no `/cluster`, so its document
 * carries no `Daemon` (an unused component is a lint warning).
 */
function usedSchemas(paths: unknown, all: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const refs = (v: unknown) => [...JSON.stringify(v).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  const used = new Set<string>();
  const queue = refs(paths);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (used.has(name) || !(name in all)) continue;
    used.add(name);
    queue.push(...refs(all[name]));
  }
  return Object.fromEntries(Object.entries(all).filter(([name]) => used.has(name)));
}
