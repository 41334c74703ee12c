/**
 * The shape of an env.yaml (a project's, or ~/.service/env.yaml): the
 * `connections:` map and the `env:` map. schemas/env.schema.json is
 * generated from it; the loader (load-connections.ts, parse-entry.ts) reads
 * the same keys and takes the name rule and the sslmode values from the
 * same constants, and a test requires both to agree on a corpus of files
 * (the schema is closed, so an editor also flags a key the loader ignores).
 */
import { boolean, integer, literal, number, string, type } from 'superstruct';
import { closedForEditors, described, field, mapOf, matching, oneOf } from '../schemas/shape.js';
import { CONNECTION_NAME } from './connection.js';

/** Connection properties are read as text: a number or a boolean is as good as a string. */
const scalar = oneOf([string(), number(), boolean()]);

const properties = {
  host: field(scalar),
  port: field(oneOf([integer(), matching(/^\d*$/)])),
  user: field(scalar),
  username: field(scalar),
  password: field(scalar),
  database: field(scalar),
  dbname: field(scalar),
  sslmode: field(described(string(), 'disable, allow, prefer, require, verify-ca or verify-full')),
  schema: field(scalar),
  instance: field(described(scalar, 'duckdb: the database file, relative to this env.yaml')),
};
const TYPE = described(string(), 'postgres (or postgresql), duckdb, or file (or local)');
const URL = described(string(), 'postgresql://user:password@host:port/db?sslmode=…&schema=…, duckdb:///path.duckdb, or file:///folder');

/** A connection is written with a `type:` and its properties, or as a `url:` (a `type:` beside it must match the scheme). */
export const ConnectionShape = oneOf([closedForEditors(type({ type: TYPE, url: field(URL), ...properties })), closedForEditors(type({ type: field(TYPE), url: URL, ...properties }))]);

export const EnvFileShape = closedForEditors(type({
  connections: field(described(mapOf(ConnectionShape, CONNECTION_NAME), 'connection name (a letter, then letters, digits or _) to its definition')),
  env: field(described(mapOf(oneOf([string(), number(), boolean(), literal(null)])), 'variables for ${NAME} in this file')),
}));
