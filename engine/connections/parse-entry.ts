/**
 * One connection definition → `Connection`: the properties form and the URL
 * form (`type: postgres, host, …`, `type: duckdb, instance:`,
 * `url: postgresql://…`). Both forms end in the same record so nothing
 * downstream cares how the user wrote it.
 *
 * Relative DuckDB paths resolve against the env file's directory for
 * `instance:` and against the working directory for URLs.
 * Problem texts never quote a URL or password: they end up in logs.
 */
import { isAbsolute, resolve } from 'node:path';
import { SSL_MODES, type Connection, type ConnectionSource, type SslMode } from './connection.js';

export interface EntryContext {
  readonly source: ConnectionSource;
  /** Directory against which a relative `instance:` path resolves. */
  readonly baseDir: string;
  /** Directory against which a relative `duckdb://` URL path resolves. */
  readonly cwd: string;
}

const TYPE_ALIASES: Readonly<Record<string, string>> = { postgresql: 'postgres', local: 'file' };

const URL_SCHEMES: Readonly<Record<string, string>> = { postgres: 'postgres', postgresql: 'postgres', duckdb: 'duckdb', file: 'file' };

/** The scheme of `text` when it is a connection URL this service understands, else undefined. */
export function connectionUrlType(text: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text.trim());
  return m ? URL_SCHEMES[m[1]!.toLowerCase()] : undefined;
}

type Fields = Record<string, unknown>;

function invalid(name: string, ctx: EntryContext, declaredType: string, problem: string): Connection {
  return { type: 'invalid', name, source: ctx.source, declaredType, problem };
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function parsePort(v: unknown): number | string {
  if (v === undefined || v === null || v === '') return 5432;
  const n = typeof v === 'number' ? v : /^\d+$/.test(String(v)) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : `port must be an integer between 1 and 65535, got '${String(v)}'`;
}

function parseSslMode(v: unknown): SslMode | string {
  const s = text(v)?.toLowerCase() ?? 'disable';
  return (SSL_MODES as readonly string[]).includes(s) ? (s as SslMode) : `sslmode must be one of: ${SSL_MODES.join(', ')}; got '${s}'`;
}

function postgres(name: string, f: Fields, ctx: EntryContext): Connection {
  const port = parsePort(f.port);
  if (typeof port === 'string') return invalid(name, ctx, 'postgres', port);
  const sslmode = parseSslMode(f.sslmode);
  if (!(SSL_MODES as readonly string[]).includes(sslmode)) return invalid(name, ctx, 'postgres', sslmode);
  const user = text(f.user) ?? text(f.username);
  if (user === undefined) return invalid(name, ctx, 'postgres', 'postgres connections need a user');
  const password = text(f.password);
  return {
    type: 'postgres',
    name,
    source: ctx.source,
    host: text(f.host) ?? 'localhost',
    port,
    user,
    ...(password !== undefined ? { password } : {}),
    database: text(f.database) ?? text(f.dbname) ?? user,
    sslmode: sslmode as SslMode,
    schema: text(f.schema) ?? 'public',
  };
}

function duckdb(name: string, path: string | undefined, schema: string | undefined, base: string, ctx: EntryContext, fromUrl = false): Connection {
  if (path === undefined) return invalid(name, ctx, 'duckdb', 'duckdb connections need an instance path (instance: <file>) or a duckdb:// URL');
  const relative = path !== ':memory:' && !isAbsolute(path);
  const abs = relative ? resolve(base, path) : path;
  return { type: 'duckdb', name, source: ctx.source, path: abs, schema: schema ?? 'main', ...(relative && fromUrl ? { cwdRelative: path } : {}) };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `postgresql://user:pw@host:port/db?sslmode=…&schema=…` → properties. */
function postgresFromUrl(name: string, url: string, extra: Fields, ctx: EntryContext): Connection {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return invalid(name, ctx, 'postgres', 'the postgres URL cannot be parsed');
  }
  const q = u.searchParams;
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return postgres(
    name,
    {
      host: host !== '' ? host : q.get('host') ?? undefined,
      port: u.port !== '' ? u.port : q.get('port') ?? undefined,
      user: u.username !== '' ? decode(u.username) : q.get('user') ?? undefined,
      password: u.password !== '' ? decode(u.password) : q.get('password') ?? undefined,
      database: u.pathname.length > 1 ? decode(u.pathname.slice(1)) : q.get('dbname') ?? undefined,
      sslmode: q.get('sslmode') ?? undefined,
      schema: text(extra.schema) ?? q.get('schema') ?? undefined,
    },
    ctx,
  );
}

/** `duckdb:///abs`, `duckdb://rel.duckdb`, `duckdb://:memory:`; relative to the working directory. */
function duckdbFromUrl(name: string, url: string, extra: Fields, ctx: EntryContext): Connection {
  const rest = url.trim().slice('duckdb://'.length);
  const q = rest.indexOf('?');
  const rawPath = decode(q >= 0 ? rest.slice(0, q) : rest);
  const schema = text(extra.schema) ?? (q >= 0 ? new URLSearchParams(rest.slice(q + 1)).get('schema') ?? undefined : undefined);
  return duckdb(name, rawPath === '' ? undefined : rawPath, schema, ctx.cwd, ctx, true);
}

/** A connection from a bare URL (an environment variable's value or `url:`). */
export function connectionFromUrl(name: string, url: string, ctx: EntryContext, extra: Fields = {}): Connection {
  const type = connectionUrlType(url);
  if (type === 'postgres') return postgresFromUrl(name, url, extra, ctx);
  if (type === 'duckdb') return duckdbFromUrl(name, url, extra, ctx);
  if (type === 'file') return { type: 'file', name, source: ctx.source, url: url.trim() };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim())?.[1]?.toLowerCase() ?? 'unknown';
  return { type: 'unsupported', name, source: ctx.source, declaredType: scheme };
}

/** One value of a `connections:` map. */
export function connectionFromEntry(name: string, raw: unknown, ctx: EntryContext): Connection {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return invalid(name, ctx, 'unknown', 'a connection must be a mapping (type: … or url: …)');
  }
  const f = raw as Fields;
  const declared = text(f.type)?.toLowerCase();
  const type = declared !== undefined ? TYPE_ALIASES[declared] ?? declared : undefined;
  const url = text(f.url);
  if (url !== undefined) {
    const fromUrl = connectionFromUrl(name, url, ctx, f);
    const urlType = fromUrl.type === 'unsupported' || fromUrl.type === 'invalid' ? fromUrl.declaredType : fromUrl.type;
    if (type !== undefined && type !== urlType) return invalid(name, ctx, type, `type '${type}' does not match the URL scheme '${urlType}'`);
    return fromUrl;
  }
  if (type === undefined) return invalid(name, ctx, 'unknown', 'a connection needs a type or a url');
  if (type === 'postgres') return postgres(name, f, ctx);
  if (type === 'duckdb') return duckdb(name, text(f.instance), text(f.schema), ctx.baseDir, ctx);
  if (type === 'file') return invalid(name, ctx, 'file', 'file connections need a url (url: file:///…)');
  return { type: 'unsupported', name, source: ctx.source, declaredType: type };
}
