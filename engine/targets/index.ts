/**
 * Target selection: a registry keyed by connection type. Adding a target
 * means adding a folder and one entry here, never a type switch
 * elsewhere. Also the public surface of the target layer.
 */
import type { Connection, DuckDbConnection, PostgresConnection } from '../connections/connection.js';
import type { ConnectionRegistry } from '../connections/load-connections.js';
import { declaredType } from '../connections/connection.js';
import { EngineError } from '../errors.js';
import type { Dialect } from './dialect.js';
import { duckdbDialect } from './duckdb/dialect.js';
import { duckdbTarget } from './duckdb/target.js';
import { postgresDialect } from './postgres/dialect.js';
import { postgresTarget } from './postgres/target.js';
import type { Target, TargetType } from './target.js';

export interface TargetOptions {
  /** PostgreSQL: session connections in the pool (one per worker). */
  readonly poolSize?: number;
  readonly connectTimeoutMs?: number;
}

interface TargetEntry<C extends Connection> {
  readonly dialect: Dialect;
  readonly create: (conn: C, options: TargetOptions) => Target;
}

const TARGETS: { readonly [K in TargetType]: TargetEntry<Extract<Connection, { type: K }>> } = {
  postgres: { dialect: postgresDialect, create: (c: PostgresConnection, o) => postgresTarget(c, o) },
  duckdb: { dialect: duckdbDialect, create: (c: DuckDbConnection) => duckdbTarget(c) },
};

export function isTargetType(type: string): type is TargetType {
  return Object.prototype.hasOwnProperty.call(TARGETS, type);
}

/** `postgres and duckdb` — the supported list as the unsupported-target message spells it. */
function supportedList(): string {
  const names = Object.keys(TARGETS);
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** The dialect for a connection type, without connecting (`compile`); undefined when unsupported. */
export function dialectFor(type: string): Dialect | undefined {
  return isTargetType(type) ? TARGETS[type].dialect : undefined;
}

/**
 * A `Target` for `conn` (no connection is opened until `open()`). Fails with
 * The message `target '<t>' has type '<type>'; service build supports postgres and
 * duckdb`, or `could not connect to '<t>': <problem>` for a malformed entry.
 */
export function openTarget(conn: Connection, options: TargetOptions = {}): Target {
  if (conn.type === 'invalid') {
    throw new EngineError('connection', `could not connect to '${conn.name}'`, new EngineError('connection', conn.problem));
  }
  if (!isTargetType(conn.type)) {
    throw new EngineError('target', `target '${conn.name}' has type '${declaredType(conn)}'; service build supports ${supportedList()}`);
  }
  const entry = TARGETS[conn.type] as TargetEntry<Connection>;
  return entry.create(conn, options);
}

/** Looks `name` up (`connection '<t>' not found`) and opens its target. */
export function targetByName(registry: ConnectionRegistry, name: string, options: TargetOptions = {}): Target {
  return openTarget(registry.require(name), options);
}

export type * from './target.js';
export type { Dialect } from './dialect.js';
export { dataTestSql, dataTestFailedMessage, dataTestExecPrefix } from './data-test-sql.js';
export type { DataTest, DataTestQuery, Severity } from './data-test-sql.js';
export { formatLiteral, quoteString } from './literal.js';
export { quoteIdent, quoteRelation, relationText, tempRelation } from './relation.js';
export { closeAllDuckdbInstances, closeDuckdbInstance, duckdbInstance } from './duckdb/instance-cache.js';
