/**
 * The daemon's HTTP API in-process for tests: a fresh temp data dir, a
 * SQLite state store, two projects (`acme` and `beta`) with a token each,
 * the real ProjectService, ExecutionService (worker pool + line router) and
 * GitSync, and the Koa app on an ephemeral port. `request()` speaks JSON with acme's
 * token unless told otherwise. Call `close()` in `after`: it stops the
 * executions, the pool, the server and removes the temp dir.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { lineRouter } from '../../actors/daemon/line-router.js';
import { ExecutionService } from '../../actors/daemon/executions.js';
import { TaskPool } from '../../actors/pool.js';
import { loadConnections, readEnvFile } from '../../engine/connections/index.js';
import type { Logger } from '../../engine/log.js';
import { GitSync } from '../../engine/git/index.js';
import { ProjectService, projectPaths } from '../../engine/daemon-projects/index.js';
import { sha256hex } from '../../engine/state/ids.js';
import { openSqliteStore } from '../../engine/state/sqlite-store.js';
import type { StateStore } from '../../engine/state/store.js';
import { createApp } from '../../http/app.js';
import { installClientErrorHandler } from '../../http/client-error.js';
import { openApiDocument } from '../../http/openapi.js';
import { responseChecker } from './openapi-check.js';
import { gitRoutes } from '../../http/routes/git.js';
import { apiRoutes } from '../../http/routes/index.js';

export const API_VERSION = '1.0.0';

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON (every response of the API is JSON). */
  readonly body: any;
}

export interface RequestOptions {
  /** Token to send; null sends no Authorization header. Default: acme's token. */
  readonly token?: string | null;
  /** A full Authorization header value (overrides `token`). */
  readonly authorization?: string;
  /** JSON-encoded unless `raw` is given. */
  readonly body?: unknown;
  readonly raw?: string | Buffer;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

export interface ApiServer {
  readonly url: string;
  readonly store: StateStore;
  readonly dataDir: string;
  readonly base: string;
  readonly acme: { readonly id: string; readonly token: string; readonly root: string; readonly envFile: string };
  readonly beta: { readonly id: string; readonly token: string; readonly root: string; readonly envFile: string };
  readonly executions: ExecutionService;
  /** The git pull behind `POST /project/git/pull` (as the daemon wires it). */
  readonly git: GitSync;
  readonly logs: string[];
  /** Names of the files whose save-time validation ran on a worker thread. */
  readonly offThreadValidations: string[];
  request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', pathAndQuery: string, options?: RequestOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiServerOptions {
  /** Content of acme's project env file. */
  readonly acmeEnv?: string;
  /** Content of the host env file (`$SERVICE_HOME_DIR/env.yaml`). */
  readonly hostEnv?: string;
  /** `--allow-command-steps`; default off, as in the acceptance fixture. */
  readonly allowCommandSteps?: boolean;
  /** The git fetch time limit (default 120 s). */
  readonly gitFetchTimeoutMs?: number;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'service-api-'));
  const dataDir = path.join(base, 'data');
  const home = path.join(base, 'home');
  await mkdir(home, { recursive: true });
  if (options.hostEnv !== undefined) await writeFile(path.join(home, 'env.yaml'), options.hostEnv);
  // Execution pages read on reader threads, as in `service serve`.
  const store = openSqliteStore(path.join(base, 'state.db'), { readerThreads: 2 });
  const project = async (name: string) => {
    const p = await store.createProject({ name });
    const token = randomUUID();
    await store.addToken(p.id, sha256hex(token));
    const paths = projectPaths(dataDir, p.id);
    await mkdir(paths.files, { recursive: true });
    await writeFile(paths.envFile, '');
    return { id: p.id, token, root: paths.files, envFile: paths.envFile };
  };
  const acme = await project('acme');
  const beta = await project('beta');
  if (options.acmeEnv !== undefined) await writeFile(acme.envFile, options.acmeEnv);

  // No process environment leaks into the tests: host env and URL variables come only from here.
  const env = { SERVICE_HOME_DIR: home };
  const connections = (projectId: string) => loadConnections({ projectEnvFile: projectPaths(dataDir, projectId).envFile, env, cwd: base });
  const logs: string[] = [];
  const logger: Logger = { log: (level, message) => void logs.push(`${level} ${message}`), enabled: () => true };
  const pool = new TaskPool({ maxThreads: 2, minThreads: 0 });
  const offThread: string[] = [];
  const projects = new ProjectService({
    dataDir,
    store,
    connections,
    logger,
    validateOffThread: (projectId, name, content) => {
      offThread.push(name);
      const paths = projectPaths(dataDir, projectId);
      return pool.run({ type: 'jobfile.validate', name, content, root: paths.files, envFile: paths.envFile });
    },
  });
  const lines = lineRouter();
  const executions = new ExecutionService({
    store,
    pool,
    logger,
    maxRunning: 4,
    owner: `test-${randomUUID()}`,
    connections,
    projectRoot: (projectId) => projectPaths(dataDir, projectId).files,
    allowCommandSteps: options.allowCommandSteps ?? false,
    loadJobFile: (projectId, fileName) => projects.loadJobFile(projectId, fileName),
    envLookup: (projectId) => {
      const file = readEnvFile(projectPaths(dataDir, projectId).envFile, 'project', base);
      return (name) => file.env[name];
    },
    lines,
  });
  const git = new GitSync({ dataDir, store, scope: (id) => projects.scope(id), logger, fetchTimeoutMs: options.gitFetchTimeoutMs });
  const routes = apiRoutes({ version: API_VERSION, store, projects, executions, connections, extraRoutes: gitRoutes({ git }) });
  const checkResponse = responseChecker(openApiDocument(routes, API_VERSION));
  const app = createApp({
    routes,
    projectForDigest: (digest) => store.projectIdForToken(digest),
    logger,
  });
  const server = http.createServer(app.callback());
  installClientErrorHandler(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function request(method: string, pathAndQuery: string, o: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const token = o.token === undefined ? acme.token : o.token;
    if (o.authorization !== undefined) headers.authorization = o.authorization;
    else if (token !== null) headers.authorization = `Service-Project-Token ${token}`;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
    const res = await fetch(url + pathAndQuery, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    const parsed = text === '' ? undefined : JSON.parse(text);
    checkResponse(method, pathAndQuery, res.status, parsed);
    return { status: res.status, headers: res.headers, body: parsed };
  }

  return {
    url,
    store,
    dataDir,
    base,
    acme,
    beta,
    executions,
    git,
    logs,
    offThreadValidations: offThread,
    request,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await executions.shutdown(0);
      await pool.destroy();
      lines.close();
      await store.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Polls `fn` until it returns a value that is not undefined, or fails after `ms`. */
export async function eventually<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * acme's project env file of the acceptance fixture: WAREHOUSE
 * (PostgreSQL at `warehouseUrl`), LAKE (a DuckDB file beside the env file)
 * and BROKEN (PostgreSQL on port 1, never reachable).
 */
export function fixtureEnv(warehouseUrl = 'postgresql://postgres@127.0.0.1:1/warehouse'): string {
  return [
    'connections:',
    '  WAREHOUSE:',
    `    url: ${warehouseUrl}`,
    '  LAKE:',
    '    type: duckdb',
    '    instance: lake.duckdb',
    '  BROKEN:',
    '    type: postgres',
    '    host: 127.0.0.1',
    '    port: 1',
    '    user: nobody',
    '    password: s3cret-pw',
    '    database: nothing',
    '',
  ].join('\n');
}

/** The host env file of the fixture: EXPORTS, a file connection. */
export function fixtureHostEnv(exportsDir: string): string {
  return `connections:\n  EXPORTS:\n    type: file\n    url: file://${exportsDir}\n`;
}

/** `U`: the 132-byte replication body. */
export const U = "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: '{target_schema}.{stream_table}'\nstreams:\n  public.users:\n    mode: full-refresh\n";

export const JOB_ID = /^job_[a-z0-9]{16}$/;
export const EXEC_ID = /^[0-9A-Za-z]{27}$/;
export const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
