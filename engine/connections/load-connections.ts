/**
 * The connections a build or the daemon can use, from three sources in
 * precedence order when names collide:
 *   1. `project`  — the project's env file (`connections:` map), path given by the caller;
 *   2. `host`     — `~/.service/env.yaml` (`SERVICE_HOME_DIR` replaces `~/.service`);
 *   3. `env_var`  — environment variables whose value is a postgres/duckdb/file URL.
 * Names match case-insensitively; the winning definition keeps its spelling.
 *
 * A file that cannot be read or parsed contributes nothing and is reported in
 * `problems` instead of failing the load: the daemon must keep serving the
 * other sources, and the CLI can print the problem next to its own error.
 * Reads are synchronous: the files are a few hundred bytes, read once per
 * command (the daemon re-calls this when a file's mtime changes).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseYaml } from '../yaml-lib.js';
import { substituteEnv } from '../project/env-substitution.js';
import { EngineError } from '../errors.js';
import { serviceHomeDir } from '../home-env.js';
import { CONNECTION_NAME, connectionInfo, type Connection, type ConnectionInfo, type ConnectionSource } from './connection.js';
import { connectionFromEntry, connectionFromUrl, connectionUrlType } from './parse-entry.js';
import { redact } from './redact.js';

export interface LoadConnectionsOptions {
  /** The project's env file (beside `service_build.yml` on the command line); may not exist. */
  readonly projectEnvFile?: string;
  /** Environment for source 3 and `SERVICE_HOME_DIR`; defaults to `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Base for relative `duckdb://` URLs; defaults to `process.cwd()`. */
  readonly cwd?: string;
}

export interface EnvFileProblem {
  readonly file: string;
  readonly message: string;
}

export interface EnvFileContent {
  readonly connections: readonly Connection[];
  /** The file's `env:` map, values as text. */
  readonly env: Readonly<Record<string, string>>;
  readonly problems: readonly EnvFileProblem[];
}

export interface ConnectionRegistry {
  /** Case-insensitive lookup of the winning definition. */
  get(name: string): Connection | undefined;
  /** Like `get`, but a missing name is the documented `connection '<t>' not found`. */
  require(name: string): Connection;
  /** Winning definitions sorted by name, without secrets. */
  list(): ConnectionInfo[];
  /** Files that were skipped or entries that were dropped, with the reason. */
  readonly problems: readonly EnvFileProblem[];
  /** `redact` with every known password added to the secret list. */
  redact(text: string): string;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}

/**
 * `${NAME}` / `${NAME:-fallback}` in a connection's string values, from the
 * file's own `env:` map and then the process environment (as in
 * `service_build.yml`). A token left unresolved makes the connection invalid
 * with a problem naming the field and the variable — not a confusing
 * complaint about the URL it would have been.
 */
function withVariables(name: string, entry: unknown, lookup: (name: string) => string | undefined, source: ConnectionSource, parse: (entry: unknown) => Connection): Connection {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return parse(entry);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
    if (typeof value !== 'string') {
      out[key] = value;
      continue;
    }
    const sub = substituteEnv(value, lookup);
    const missing = [...sub.unresolved][0];
    if (missing !== undefined) {
      const declared = typeof (entry as Record<string, unknown>).type === 'string' ? String((entry as Record<string, unknown>).type) : 'unknown';
      return { type: 'invalid', name, source, declaredType: declared, problem: `${key} uses \${${missing}} but ${missing} is not set (set it in the env: map of this file or in the environment)` };
    }
    out[key] = sub.text;
  }
  return parse(out);
}

/** Reads one env file; a missing file is empty, not a problem. */
export function readEnvFile(file: string, source: ConnectionSource, cwd: string): EnvFileContent {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { connections: [], env: {}, problems: [] };
    return { connections: [], env: {}, problems: [{ file, message: `could not read ${file}: ${(err as Error).message}` }] };
  }
  let doc: unknown;
  try {
    doc = parseYaml(raw);
  } catch (err) {
    return { connections: [], env: {}, problems: [{ file, message: redact(`could not parse ${file}: ${firstLine((err as Error).message)}`) }] };
  }
  if (doc === null || doc === undefined) return { connections: [], env: {}, problems: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    return { connections: [], env: {}, problems: [{ file, message: `could not parse ${file}: expected a mapping with connections: and env:` }] };
  }
  const top = doc as Record<string, unknown>;
  const ownEnv = top.env && typeof top.env === 'object' && !Array.isArray(top.env) ? (top.env as Record<string, unknown>) : {};
  const lookup = (name: string) => (Object.hasOwn(ownEnv, name) && ownEnv[name] != null ? String(ownEnv[name]) : process.env[name] || undefined);
  const problems: EnvFileProblem[] = [];
  const connections: Connection[] = [];
  const seen = new Set<string>();
  const map = top.connections;
  if (map !== undefined && map !== null && (typeof map !== 'object' || Array.isArray(map))) {
    problems.push({ file, message: `${file}: connections must be a mapping of name to definition` });
  } else if (map) {
    const ctx = { source, baseDir: dirname(resolve(file)), cwd };
    for (const [name, entry] of Object.entries(map as Record<string, unknown>)) {
      if (!CONNECTION_NAME.test(name)) {
        problems.push({ file, message: `${file}: connection name '${name}' is invalid: expected a letter, then letters, digits or _ (at most 64)` });
        continue;
      }
      if (seen.has(name.toLowerCase())) {
        problems.push({ file, message: `${file}: connection '${name}' is defined twice (names are case-insensitive)` });
        continue;
      }
      seen.add(name.toLowerCase());
      const conn = withVariables(name, entry, lookup, source, (e) => connectionFromEntry(name, e, ctx));
      if (conn.type === 'invalid') problems.push({ file, message: `${file}: connection '${name}': ${conn.problem}` });
      connections.push(conn);
    }
  }
  const envMap = top.env;
  const env: Record<string, string> = {};
  if (envMap && typeof envMap === 'object' && !Array.isArray(envMap)) {
    for (const [k, v] of Object.entries(envMap as Record<string, unknown>)) env[k] = v === null || v === undefined ? '' : String(v);
  }
  return { connections, env, problems };
}

/** Source 3: `NAME=postgres://…` style variables; `SERVICE_*` never are connections. */
export function envVarConnections(env: NodeJS.ProcessEnv, cwd: string): Connection[] {
  const out: Connection[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !CONNECTION_NAME.test(name) || /^SERVICE_/i.test(name)) continue;
    if (connectionUrlType(value) === undefined) continue;
    out.push(connectionFromUrl(name, value, { source: 'env_var', baseDir: cwd, cwd }));
  }
  return out;
}

function secretsOf(connections: Iterable<Connection>): string[] {
  const out: string[] = [];
  for (const c of connections) if (c.type === 'postgres' && c.password !== undefined) out.push(c.password);
  return out;
}

export function loadConnections(opts: LoadConnectionsOptions = {}): ConnectionRegistry {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const project = opts.projectEnvFile !== undefined ? readEnvFile(opts.projectEnvFile, 'project', cwd) : undefined;
  const host = readEnvFile(join(serviceHomeDir(env), 'env.yaml'), 'host', cwd);
  const layers: (readonly Connection[])[] = [project?.connections ?? [], host.connections, envVarConnections(env, cwd)];

  return registryOf(layers.flat(), [...(project?.problems ?? []), ...host.problems]);
}

/**
 * A registry over connections in order of precedence (the first of a name
 * wins, case-insensitively). Also rebuilds, on a worker thread, a registry
 * sent as `snapshotConnections` (plain data).
 */
export function registryOf(connections: readonly Connection[], problems: readonly EnvFileProblem[] = []): ConnectionRegistry {
  const byName = new Map<string, Connection>();
  for (const c of connections) if (!byName.has(c.name.toLowerCase())) byName.set(c.name.toLowerCase(), c);
  const secrets = secretsOf(connections);
  return {
    get: (name) => byName.get(name.toLowerCase()),
    require(name) {
      const c = byName.get(name.toLowerCase());
      if (c === undefined) throw new EngineError('target', `connection '${name}' not found`);
      return c;
    },
    list: () => [...byName.values()].map(connectionInfo).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    problems,
    redact: (text) => redact(text, secrets),
  };
}

/** The registry's winning connections as plain data (to rebuild it with registryOf on another thread). */
export function snapshotConnections(registry: ConnectionRegistry): Connection[] {
  return registry.list().map((info) => registry.get(info.name)!);
}
