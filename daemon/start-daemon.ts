/**
 * The daemon's composition root: one process with the HTTP API, the
 * scheduler and the execution workers, put together from engine/, actors/
 * and http/ (cli/serve.ts only reads the flags and handles signals). Start:
 * listen (503 "starting") → open and migrate the store → restart recovery →
 * schedules → serve → dispatch. `stop`: stop accepting, stop the scheduler
 * and dispatch, wait up to the grace period for running executions, cancel
 * the rest, close the store.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExecutionService } from '../actors/daemon/executions.js';
import { ClusterMember } from '../actors/daemon/cluster-member.js';
import { GitPoller } from '../actors/daemon/git-poller.js';
import { lineRouter, type LineRouter } from '../actors/daemon/line-router.js';
import { cleanUpInterrupted } from '../actors/daemon/recovery-cleanup.js';
import { refreshOnJobChange, Scheduler } from '../actors/daemon/scheduler.js';
import { closeAllDuckDbActors } from '../actors/duckdb-actor.js';
import { setWorkerNiceness, TaskPool } from '../actors/pool.js';
import { reniceThreadpool } from '../actors/threadpool-niceness.js';
import { readEnvFile, type ConnectionRegistry } from '../engine/connections/index.js';
import { cachedConnections } from '../engine/connections/registry-cache.js';
import { ClusterDb, CANCEL_CHANNEL, QUEUE_CHANNEL } from '../engine/cluster/cluster-db.js';
import { FileSync } from '../engine/cluster/file-sync.js';
import { sweepStagingFiles } from '../engine/files/sweep-staging.js';
import { closeTreeIndexes } from '../engine/files/tree-index.js';
import { GitSync } from '../engine/git/index.js';
import { homeEnvVars } from '../engine/home-env.js';
import type { Logger } from '../engine/log.js';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { ProjectService } from '../engine/daemon-projects/project-service.js';
import { lockDataDir, type DaemonLock } from '../engine/state/daemon-lock.js';
import { openStateStore, parseStateLocation } from '../engine/state/open-state-store.js';
import type { ExecutionRecord, JobRecord, StateStore } from '../engine/state/store.js';
import { VERSION } from '../engine/version.js';
import { createApp } from '../http/app.js';
import { AuthFailureLimiter } from '../http/auth-limit.js';
import { clusterRoutes } from '../http/routes/cluster.js';
import { gitRoutes } from '../http/routes/git.js';
import { apiRoutes } from '../http/routes/index.js';
import { startingServer, type StartingServer } from '../http/startup.js';
import { webConsole, type WebConsole } from '../http/ui/web-console.js';
import { clusterSetup, type ClusterSetup } from './cluster-setup.js';
import type { DaemonFlags } from './daemon-options.js';

/**
 * SQLite: threads reading execution pages off the event loop (engine/state/sqlite-readers.ts).
 */
const READER_THREADS = 2;

/** Linux nice value of the threads that run executions (actors/pool.ts, setWorkerNiceness). */
const WORKER_NICENESS = 10;

export interface RunningDaemon {
  readonly server: Server;
  readonly store: StateStore;
  readonly url: string;
  /** Its scheduler (tests read `nextWake`). */
  readonly scheduler: Scheduler;
  /** Graceful stop; `immediate` skips the wait. */
  stop(immediate?: boolean): Promise<void>;
}

export interface DaemonHooks {
  /** Cluster mode: another daemon took this one over (it lost its lease); the daemon should exit. */
  readonly onFenced?: () => void;
}

/** What the daemon opened before it builds its services: the lock, the listening server, the store, the cluster's database. */
interface Opened {
  readonly flags: DaemonFlags;
  readonly logger: Logger;
  readonly lock: DaemonLock;
  /** Same on every start from this data directory and host. */
  readonly node: string;
  /** This process's id in the store (the node, or in cluster mode one per process). */
  readonly owner: string;
  readonly http: StartingServer;
  readonly url: string;
  readonly sqlite: boolean;
  readonly cluster?: ClusterSetup;
  readonly store: StateStore;
  readonly db?: ClusterDb;
  readonly fileSync?: FileSync;
}

async function openDaemon(flags: DaemonFlags, logger: Logger): Promise<Opened> {
  const location = parseStateLocation(flags.state);
  const lock = lockDataDir(flags.dataDir, location.kind === 'sqlite' ? location.path : undefined);
  // The node is the same on every start from this data directory and host: holding the
  // directory's lock proves the previous daemon of the node is gone.
  const node = `daemon-${hostname().replace(/[^A-Za-z0-9.-]/g, '-')}-${createHash('sha256').update(flags.dataDir).digest('hex').slice(0, 12)}`;
  // A PostgreSQL store is shared: cluster mode, one id per process (fencing is per process).
  const clustered = location.kind === 'postgres';
  const owner = clustered ? `${node}-${Date.now().toString(36)}${randomBytes(3).toString('hex')}` : node;
  // Listening at once: until recovery is done `/health` answers 503 "starting" (http/startup.ts).
  const http = startingServer(VERSION);
  let url: string;
  let cluster: ClusterSetup | undefined;
  let store: StateStore;
  try {
    url = await listen(http.server, flags);
    cluster = clustered ? clusterSetup(flags, logger) : undefined;
    store = await openStateStore(flags.state, clustered ? { daemonId: owner } : { readerThreads: READER_THREADS });
  } catch (err) {
    http.server.close();
    lock.release();
    throw err;
  }
  const db = cluster && ClusterDb.open(flags.state, owner);
  const fileSync = db && new FileSync(db.pool, flags.dataDir, owner, logger);
  return { flags, logger, lock, node, owner, http, url, sqlite: location.kind === 'sqlite', cluster, store, db, fileSync };
}

/** Listens on the flags' address; the URL clients use. */
async function listen(server: Server, flags: DaemonFlags): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(flags.port, flags.host, () => resolve());
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? `http://${flags.host}:${addr.port}` : `http://${flags.host}:${flags.port}`;
}

async function lowerWorkerPriority(logger: Logger): Promise<void> {
  // Executions' threads (the pool's workers, each DuckDB file's thread) yield the CPU to this
  // thread, which serves requests. On 2 cores, /health from 10 clients while a 1,000,000-row
  // PostgreSQL → DuckDB replication ran: p99 19–52 ms and 1,600–3,700 req/s without this,
  // 7–11 ms and 5,700–6,600 req/s with it (three alternating runs of each build, bench suite 4's
  // load); the replication took no longer.
  setWorkerNiceness(WORKER_NICENESS);
  // DuckDB's statements (and the threads DuckDB starts) run in libuv's threadpool: the same
  // nice value, before any DuckDB file opens.
  const threadpool = await reniceThreadpool(WORKER_NICENESS);
  if (threadpool.reniced < threadpool.expected) {
    logger.log('warn', `threadpool priority: ${threadpool.reniced} of ${threadpool.expected} libuv threadpool threads set to nice ${WORKER_NICENESS} (DuckDB's work on the others competes with requests)`);
  }
}

/** The pools and services executions and requests share. */
interface Services {
  readonly connections: (projectId: string) => ConnectionRegistry;
  /** Wakes the scheduler on every job change (set once the scheduler exists). */
  readonly wake: { scheduler?: Scheduler };
  readonly jobStore: StateStore;
  readonly pool: TaskPool;
  readonly validationPool: () => TaskPool;
  readonly destroyValidator: () => Promise<void>;
  readonly projects: ProjectService;
  readonly lines: LineRouter;
  readonly executions: ExecutionService;
}

function projectService(o: Opened, jobStore: StateStore, connections: Services['connections'], validationPool: () => TaskPool): ProjectService {
  const { flags, fileSync } = o;
  return new ProjectService({
    dataDir: flags.dataDir,
    store: jobStore,
    connections,
    logger: o.logger,
    validateOffThread: (projectId, name, content) => {
      const paths = projectPaths(flags.dataDir, projectId);
      return validationPool().run({ type: 'jobfile.validate', name, content, root: paths.files, envFile: paths.envFile });
    },
    ...(fileSync
      ? {
          refresh: async (projectId: string) => void (await fileSync.sync(projectId)),
          onFilesChanged: async (projectId: string, change: { action: string; paths: readonly string[] }) => {
            try {
              await fileSync.publish(projectId, change);
            } catch (err) {
              // The change is on this daemon's disk only: put those paths back as the cluster has them.
              await fileSync.restore(projectId, change.paths).catch(() => {});
              throw err;
            }
          },
        }
      : {}),
  });
}

function executionService(o: Opened, s: Omit<Services, 'executions'>): ExecutionService {
  const { flags, db, fileSync } = o;
  return new ExecutionService({
    store: o.store,
    pool: s.pool,
    logger: o.logger,
    lines: s.lines,
    maxRunning: flags.maxRunning,
    owner: o.owner,
    // SQLite: the store belongs to this directory alone (its file is locked too), so every
    // running execution in it was left by a dead daemon. PostgreSQL may be shared.
    recoverAll: o.sqlite,
    connections: s.connections,
    projectRoot: (projectId) => projectPaths(flags.dataDir, projectId).files,
    allowCommandSteps: flags.allowCommandSteps,
    ...(db && fileSync
      ? {
          prepare: async (exec: ExecutionRecord) => db.setTreeVersion(exec.exec_id, await fileSync.sync(exec.project_id)),
          onCancelled: (execId: string) => db.notify(CANCEL_CHANNEL, execId),
          onQueued: () => db.notify(QUEUE_CHANNEL, ''),
        }
      : {}),
    loadJobFile: (projectId, fileName) => s.projects.loadJobFile(projectId, fileName),
    envLookup: (projectId) => {
      const projectEnv = readEnvFile(projectPaths(flags.dataDir, projectId).envFile, 'project', flags.dataDir).env;
      const hostEnv = homeEnvVars();
      return (name) => projectEnv[name] ?? hostEnv[name] ?? (process.env[name] || undefined);
    },
  });
}

function services(o: Opened): Services {
  const wake: { scheduler?: Scheduler } = {};
  const jobStore = refreshOnJobChange(o.store, () => wake.scheduler?.refresh());
  const registries = cachedConnections();
  const connections = (projectId: string) => registries(projectPaths(o.flags.dataDir, projectId).envFile);
  // Execution tasks (build nodes, streams, queries) mostly wait on a database: each thread runs several.
  const pool = new TaskPool({ maxThreads: Math.max(2, o.flags.maxRunning), minThreads: 1, concurrentTasksPerWorker: 4 });
  // Large job-file validations get a thread of their own: behind long-running execution tasks
  // in the main pool, a save would wait for a query to end. Started on first use.
  let validator: TaskPool | undefined;
  // A save waits for its validation: not background work.
  const validationPool = () => (validator ??= new TaskPool({ maxThreads: 1, minThreads: 0, idleTimeout: 60_000, niceness: 0 }));
  const projects = projectService(o, jobStore, connections, validationPool);
  const shared = { connections, wake, jobStore, pool, validationPool, destroyValidator: async () => void (await validator?.destroy()), projects, lines: lineRouter() };
  return { ...shared, executions: executionService(o, shared) };
}

/**
 * Cluster mode records which execution a claimed due time became, in the statement that creates
 * it (a claim without one is re-fired by a survivor).
 */
function scheduledRunner(o: Opened, executions: ExecutionService): (job: JobRecord, due: Date) => Promise<string> {
  return async (job, due) => {
    const execId = await executions.requestRun(job, {}, 'schedule', o.db ? due.toISOString() : undefined);
    // Test hook, read only by test/cluster-schedule-crash.test.ts (not a user setting): the process
    // dies right after a scheduled execution was created, where a daemon once could die before its
    // claim recorded it.
    if (process.env.SERVICE_TEST_KILL_AFTER_SCHEDULED_RUN === '1') process.kill(process.pid, 'SIGKILL');
    return execId;
  };
}

/** Cluster mode: joins the cluster (heartbeats, takeovers, orphaned schedules); closes what was opened when it cannot. */
async function joinCluster(o: Opened, s: Services, fireScheduled: ReturnType<typeof scheduledRunner>, hooks: DaemonHooks): Promise<ClusterMember | undefined> {
  const { db, fileSync, cluster, store } = o;
  if (!db || !fileSync || !cluster) return undefined;
  const member = new ClusterMember({
    db,
    files: fileSync,
    info: { id: o.owner, node: o.node, host: hostname(), pid: process.pid, version: VERSION, url: null, maxRunning: o.flags.maxRunning, leaseMs: cluster.leaseMs },
    logger: o.logger,
    connections: s.connections,
    executions: s.executions,
    onFenced: () => hooks.onFenced?.(),
    fireOrphan: async (jobId, due) => {
      const job = (await store.listProjects().then((ps) => Promise.all(ps.map((p) => store.getJob(p.id, jobId))))).find((j) => j !== undefined);
      if (job) await fireScheduled(job, new Date(due));
    },
  });
  try {
    await member.start();
  } catch (err) {
    o.http.server.close();
    await db.close();
    await store.close();
    o.lock.release();
    throw err;
  }
  return member;
}

async function recoverInterrupted(o: Opened, s: Services): Promise<void> {
  const interrupted = await s.executions.recover();
  if (interrupted.length === 0) return;
  o.logger.log('warn', `marked ${interrupted.length} execution(s) interrupted: the daemon stopped while they were running`);
  const records = (await Promise.all(interrupted.map((id) => o.store.findExecution(id)))).filter((e) => e !== undefined);
  await cleanUpInterrupted(records, s.connections, o.logger);
}

function gitSync(o: Opened, s: Services): GitSync {
  const { fileSync } = o;
  return new GitSync({
    dataDir: o.flags.dataDir,
    store: s.jobStore,
    scope: (id) => s.projects.scope(id),
    logger: o.logger,
    ...(fileSync
      ? {
          beforePull: async (id: string) => void (await fileSync.sync(id)),
          afterPull: async (id: string) => void (await fileSync.publish(id, { action: 'git pull', paths: [''] })),
        }
      : {}),
  });
}

/** The API's routes and the web console, served once the HTTP app is handed to the listening server. */
function serveHttp(o: Opened, s: Services, git: GitSync): WebConsole {
  const { db, flags, store } = o;
  const authFailures = new AuthFailureLimiter();
  const extraRoutes = [...gitRoutes({ git }), ...(db ? clusterRoutes({ self: o.owner, daemons: () => db.listDaemons(), operatorDigestKnown: (d) => db.operatorTokenKnown(d), authFailures }) : [])];
  const projectForDigest = (d: string) => store.projectIdForToken(d);
  const ui = webConsole({
    authFailures,
    store: s.jobStore,
    projects: s.projects,
    executions: s.executions,
    connections: s.connections,
    gitPull: (id) => git.pull(id),
    projectRoot: (id) => projectPaths(flags.dataDir, id).files,
    // A big project's compile and layout take longer than a page may hold the event loop.
    lineage: (req) => s.validationPool().run({ type: 'lineage.view', ...req }),
    // Cluster mode: an execution another daemon runs is followed through its stored output.
    ...(db ? { runsHere: (id: string) => s.executions.runningIds().includes(id) } : {}),
    output: s.lines.output,
    projectForDigest,
    logger: o.logger,
  });
  const app = createApp({ routes: apiRoutes({ version: VERSION, store: s.jobStore, projects: s.projects, executions: s.executions, connections: s.connections, extraRoutes }), projectForDigest, logger: o.logger, authFailures, ui: (ctx) => ui.handle(ctx) });
  o.http.ready(app.callback());
  return ui;
}

interface Started {
  readonly scheduler: Scheduler;
  readonly poller: GitPoller;
  readonly ui: WebConsole;
  readonly member?: ClusterMember;
}

function stopper(o: Opened, s: Services, t: Started): (immediate?: boolean) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const server = o.http.server;
  return (immediate = false) => {
    if (immediate) void s.executions.cancelAll('cancelled: daemon shutdown');
    stopping ??= (async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      t.ui.close();
      await t.scheduler.stop();
      await t.poller.stop();
      await s.executions.shutdown(immediate ? 0 : o.flags.gracePeriodMs);
      await t.member?.stop();
      await closed;
      await s.pool.destroy();
      await s.destroyValidator();
      await closeAllDuckDbActors(); // each closes its file's instance on the file's thread, then the thread
      closeTreeIndexes();
      s.lines.close();
      await o.store.close();
      await o.db?.close();
      o.lock.release();
    })();
    return stopping;
  };
}

export async function startDaemon(flags: DaemonFlags, logger: Logger, hooks: DaemonHooks = {}): Promise<RunningDaemon> {
  const o = await openDaemon(flags, logger);
  await lowerWorkerPriority(logger);
  const s = services(o);
  const swept = await sweepStagingFiles(join(flags.dataDir, 'projects'));
  if (swept > 0) logger.log('warn', `removed ${swept} staging file(s) left by an interrupted write`);
  const fireScheduled = scheduledRunner(o, s.executions);
  const member = await joinCluster(o, s, fireScheduled, hooks);
  await recoverInterrupted(o, s);
  const { db, store } = o;
  const scheduler = new Scheduler({
    store,
    logger,
    run: fireScheduled,
    ...(db ? { claim: (job: JobRecord, due: Date) => db.claimSchedule(job.id, due.toISOString()) } : {}),
    ...(o.cluster?.clock ?? {}),
  });
  const git = gitSync(o, s);
  const poller = new GitPoller({ store, logger, pull: (id, options) => git.pull(id, options), ...(db ? { leader: () => db.gitLeader() } : {}) });
  const ui = serveHttp(o, s, git);
  await db?.setUrl(o.url);
  s.wake.scheduler = scheduler;
  scheduler.start();
  poller.start();
  s.executions.dispatch();
  if (o.cluster) logger.log('info', `cluster mode: daemon ${o.owner}, lease ${o.cluster.leaseMs} ms`);
  logger.log('info', `service ${VERSION} listening on ${o.url} (data dir ${flags.dataDir}); web console at ${o.url}/ui`);
  return { server: o.http.server, store, url: o.url, scheduler, stop: stopper(o, s, { scheduler, poller, ui, member }) };
}
