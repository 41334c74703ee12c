/**
 * Connections as plain, JSON-safe data: a resolved connection crosses the
 * worker-thread boundary inside a task, so it carries no sockets or handles,
 * only what a driver needs to open one. Paths are already absolute (DuckDB
 * relative paths are resolved when the source is read).
 *
 * `type` is the discriminant. Connections the service cannot use keep their
 * declared type for listing (`unsupported`), and an entry that is malformed
 * still shadows lower-precedence definitions of the same name (`invalid`),
 * so a typo in the project file never silently falls back to a host
 * connection pointing somewhere else.
 */

/** Where the winning definition came from. */
export type ConnectionSource = 'project' | 'host' | 'env_var';

/** Listing category. */
export type ConnectionKind = 'database' | 'file' | 'unsupported';

export type SslMode = 'disable' | 'allow' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';
export const SSL_MODES: readonly SslMode[] = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

interface ConnectionBase {
  /** As declared; lookups are case-insensitive. */
  readonly name: string;
  readonly source: ConnectionSource;
}

export interface PostgresConnection extends ConnectionBase {
  readonly type: 'postgres';
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string;
  readonly database: string;
  readonly sslmode: SslMode;
  /** Default schema (`target.schema`); `public` unless declared. */
  readonly schema: string;
  /**
   * `application_name` of this connection's sessions: the daemon tags every session of an
   * execution with its id (engine/targets/session-tag.ts) so the backends of an execution
   * interrupted by a crash can be found and terminated. Not part of the user's definition.
   */
  readonly sessionTag?: string;
}

export interface DuckDbConnection extends ConnectionBase {
  readonly type: 'duckdb';
  /** Absolute file path, or `:memory:`. */
  readonly path: string;
  /**
   * The relative path as written in a `duckdb://` URL. URL paths are relative to the working
   * directory, which a job or pipeline step sets (engine/connections/working-dir.ts).
   */
  readonly cwdRelative?: string;
  /** Default schema; `main` unless declared. */
  readonly schema: string;
}

export interface FileConnection extends ConnectionBase {
  readonly type: 'file';
  readonly url: string;
}

/** A well-formed entry of a type this service does not drive. */
export interface UnsupportedConnection extends ConnectionBase {
  readonly type: 'unsupported';
  readonly declaredType: string;
}

/** A malformed entry; `problem` says what to fix (never contains secrets). */
export interface InvalidConnection extends ConnectionBase {
  readonly type: 'invalid';
  readonly declaredType: string;
  readonly problem: string;
}

export type Connection = PostgresConnection | DuckDbConnection | FileConnection | UnsupportedConnection | InvalidConnection;

/** What listings show: never a host, user, path, URL or password. */
export interface ConnectionInfo {
  readonly name: string;
  readonly type: string;
  readonly kind: ConnectionKind;
  readonly source: ConnectionSource;
}

/** The type as the user declared it (`file` for `local`). */
export function declaredType(c: Connection): string {
  return c.type === 'unsupported' || c.type === 'invalid' ? c.declaredType : c.type;
}

const KIND_BY_TYPE: Readonly<Record<string, ConnectionKind>> = { postgres: 'database', duckdb: 'database', file: 'file' };

export function connectionKind(type: string): ConnectionKind {
  return KIND_BY_TYPE[type] ?? 'unsupported';
}

export function connectionInfo(c: Connection): ConnectionInfo {
  const type = declaredType(c);
  return { name: c.name, type, kind: connectionKind(type), source: c.source };
}

/** name rule. */
export const CONNECTION_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
