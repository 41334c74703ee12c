/**
 * `service serve`: one process with the HTTP API, the scheduler
 * and the execution workers. Start: listen (503 "starting") → open and
 * migrate the store → restart recovery → schedules → serve → dispatch. Shutdown on SIGTERM or
 * SIGINT: stop accepting, stop the scheduler and dispatch, wait up to the
 * grace period for running executions, cancel the rest, close the store,
 * exit 0; a second signal cancels at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExecutionService } from '../actors/daemon/executions.js';
import { ClusterMember } from '../actors/daemon/cluster-member.js';
import { GitPoller } from '../actors/daemon/git-poller.js';
import { lineRouter } from '../actors/daemon/line-router.js';
import { cleanUpInterrupted } from '../actors/daemon/recovery-cleanup.js';
import { refreshOnJobChange, Scheduler } from '../actors/daemon/scheduler.js';
import { closeAllDuckDbActors } from '../actors/duckdb-actor.js';
import { setWorkerNiceness, TaskPool } from '../actors/pool.js';
import { reniceThreadpool } from '../actors/threadpool-niceness.js';
import { readEnvFile } from '../engine/connections/index.js';
import { cachedConnections } from '../engine/connections/registry-cache.js';
import { ClusterDb, CANCEL_CHANNEL, QUEUE_CHANNEL } from '../engine/cluster/cluster-db.js';
import { FileSync } from '../engine/cluster/file-sync.js';
import { errorChain } from '../engine/errors.js';
import { sweepStagingFiles } from '../engine/files/sweep-staging.js';
import { closeTreeIndexes } from '../engine/files/tree-index.js';
import { GitSync } from '../engine/git/index.js';
import { homeEnvVars } from '../engine/home-env.js';
import { batchedWriter, streamLogger, type Logger } from '../engine/log.js';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { ProjectService } from '../engine/daemon-projects/project-service.js';
import { lockDataDir } from '../engine/state/daemon-lock.js';
import { openStateStore, parseStateLocation } from '../engine/state/open-state-store.js';
import type { ExecutionRecord, JobRecord, StateStore } from '../engine/state/store.js';
import { createApp } from '../http/app.js';
import { AuthFailureLimiter } from '../http/auth-limit.js';
import { clusterRoutes } from '../http/routes/cluster.js';
import { gitRoutes } from '../http/routes/git.js';
import { apiRoutes } from '../http/routes/index.js';
import { startingServer } from '../http/startup.js';
import { webConsole } from '../http/ui/web-console.js';
import { clusterSetup, type ClusterSetup } from './cluster-setup.js';
import { serveFlags, type DaemonFlags } from './daemon-flags.js';
import type { Io } from './io.js';
import type { ParsedArgs } from './parse-command-line.js';
import { VERSION } from './version.js';

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

export async function startDaemon(flags: DaemonFlags, logger: Logger, hooks: DaemonHooks = {}): Promise<RunningDaemon> {
  const location = parseStateLocation(flags.state);
  const lock = lockDataDir(flags.dataDir, location.kind === 'sqlite' ? location.path : undefined);
  // The node is the same on every start from this data directory and host: holding the
  // directory's lock proves the previous daemon of the node is gone.
  const node = `daemon-${hostname().replace(/[^A-Za-z0-9.-]/g, '-')}-${createHash('sha256').update(flags.dataDir).digest('hex').slice(0, 12)}`;
  // A PostgreSQL store is shared: cluster mode, one id per process (fencing is per process).
  const clustered = location.kind === 'postgres';
  const owner = clustered ? `${node}-${Date.now().toString(36)}${randomBytes(3).toString('hex')}` : node;
  let cluster: ClusterSetup | undefined;
  let store: StateStore;
  // Listening at once: until recovery is done `/health` answers 503 "starting" (http/startup.ts).
  const http = startingServer(VERSION);
  const server = http.server;
  let url: string;
  try {
    url = await listen(server, flags);
    cluster = clustered ? clusterSetup(flags, logger) : undefined;
    store = await openStateStore(flags.state, clustered ? { daemonId: owner } : { readerThreads: READER_THREADS });
  } catch (err) {
    server.close();
    lock.release();
    throw err;
  }
  const db = cluster && ClusterDb.open(flags.state, owner);
  const fileSync = db && new FileSync(db.pool, flags.dataDir, owner, logger);
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
  // Every job change through the services below wakes the scheduler (created further down).
  const wake: { scheduler?: Scheduler } = {};
  const jobStore = refreshOnJobChange(store, () => wake.scheduler?.refresh());
  const registries = cachedConnections();
  const connections = (projectId: string) => registries(projectPaths(flags.dataDir, projectId).envFile);
  // Execution tasks (build nodes, streams, queries) mostly wait on a database: each thread runs several.
  const pool = new TaskPool({ maxThreads: Math.max(2, flags.maxRunning), minThreads: 1, concurrentTasksPerWorker: 4 });
  // Large job-file validations get a thread of their own: behind long-running execution tasks
  // in the main pool, a save would wait for a query to end. Started on first use.
  let validator: TaskPool | undefined;
  // A save waits for its validation: not background work.
  const validationPool = () => (validator ??= new TaskPool({ maxThreads: 1, minThreads: 0, idleTimeout: 60_000, niceness: 0 }));
  const projects = new ProjectService({
    dataDir: flags.dataDir,
    store: jobStore,
    connections,
    logger,
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
  const lines = lineRouter();
  const executions = new ExecutionService({
    store,
    pool,
    logger,
    lines,
    maxRunning: flags.maxRunning,
    owner,
    // SQLite: the store belongs to this directory alone (its file is locked too), so every
    // running execution in it was left by a dead daemon. PostgreSQL may be shared.
    recoverAll: location.kind === 'sqlite',
    connections,
    projectRoot: (projectId) => projectPaths(flags.dataDir, projectId).files,
    allowCommandSteps: flags.allowCommandSteps,
    ...(db && fileSync
      ? {
          prepare: async (exec: ExecutionRecord) => db.setTreeVersion(exec.exec_id, await fileSync.sync(exec.project_id)),
          onCancelled: (execId: string) => db.notify(CANCEL_CHANNEL, execId),
          onQueued: () => db.notify(QUEUE_CHANNEL, ''),
        }
      : {}),
    loadJobFile: (projectId, fileName) => projects.loadJobFile(projectId, fileName),
    envLookup: (projectId) => {
      const projectEnv = readEnvFile(projectPaths(flags.dataDir, projectId).envFile, 'project', flags.dataDir).env;
      const hostEnv = homeEnvVars();
      return (name) => projectEnv[name] ?? hostEnv[name] ?? (process.env[name] || undefined);
    },
  });
  const swept = await sweepStagingFiles(join(flags.dataDir, 'projects'));
  if (swept > 0) logger.log('warn', `removed ${swept} staging file(s) left by an interrupted write`);
  // Cluster mode records which execution a claimed due time became, in the statement that creates
  // it (a claim without one is re-fired by a survivor).
  async function fireScheduled(job: JobRecord, due: Date): Promise<string> {
    const execId = await executions.requestRun(job, {}, 'schedule', db ? due.toISOString() : undefined);
    // Test hook, read only by test/cluster-schedule-crash.test.ts (not a user setting): the process
    // dies right after a scheduled execution was created, where a daemon once could die before its
    // claim recorded it.
    if (process.env.SERVICE_TEST_KILL_AFTER_SCHEDULED_RUN === '1') process.kill(process.pid, 'SIGKILL');
    return execId;
  }
  const member = db && fileSync && cluster
    ? new ClusterMember({
        db,
        files: fileSync,
        info: { id: owner, node, host: hostname(), pid: process.pid, version: VERSION, url: null, maxRunning: flags.maxRunning, leaseMs: cluster.leaseMs },
        logger,
        connections,
        executions,
        onFenced: () => hooks.onFenced?.(),
        fireOrphan: async (jobId, due) => {
          const job = (await store.listProjects().then((ps) => Promise.all(ps.map((p) => store.getJob(p.id, jobId))))).find((j) => j !== undefined);
          if (job) await fireScheduled(job, new Date(due));
        },
      })
    : undefined;
  try {
    await member?.start();
  } catch (err) {
    server.close();
    await db?.close();
    await store.close();
    lock.release();
    throw err;
  }
  const interrupted = await executions.recover();
  if (interrupted.length > 0) {
    logger.log('warn', `marked ${interrupted.length} execution(s) interrupted: the daemon stopped while they were running`);
    const records = (await Promise.all(interrupted.map((id) => store.findExecution(id)))).filter((e) => e !== undefined);
    await cleanUpInterrupted(records, connections, logger);
  }
  const scheduler = new Scheduler({
    store,
    logger,
    run: fireScheduled,
    ...(db ? { claim: (job: JobRecord, due: Date) => db.claimSchedule(job.id, due.toISOString()) } : {}),
    ...(cluster?.clock ?? {}),
  });
  const git = new GitSync({
    dataDir: flags.dataDir,
    store: jobStore,
    scope: (id) => projects.scope(id),
    logger,
    ...(fileSync
      ? {
          beforePull: async (id: string) => void (await fileSync.sync(id)),
          afterPull: async (id: string) => void (await fileSync.publish(id, { action: 'git pull', paths: [''] })),
        }
      : {}),
  });
  const poller = new GitPoller({ store, logger, pull: (id, options) => git.pull(id, options), ...(db ? { leader: () => db.gitLeader() } : {}) });
  const authFailures = new AuthFailureLimiter();
  const extraRoutes = [...gitRoutes({ git }), ...(db ? clusterRoutes({ self: owner, daemons: () => db.listDaemons(), operatorDigestKnown: (d) => db.operatorTokenKnown(d), authFailures }) : [])];
  const projectForDigest = (d: string) => store.projectIdForToken(d);
  const ui = webConsole({
    authFailures,
    store: jobStore,
    projects,
    executions,
    connections,
    gitPull: (id) => git.pull(id),
    projectRoot: (id) => projectPaths(flags.dataDir, id).files,
    // A big project's compile and layout take longer than a page may hold the event loop.
    lineage: (req) => validationPool().run({ type: 'lineage.view', ...req }),
    // Cluster mode: an execution another daemon runs is followed through its stored output.
    ...(db ? { runsHere: (id: string) => executions.runningIds().includes(id) } : {}),
    output: lines.output,
    projectForDigest,
    logger,
  });
  const app = createApp({ routes: apiRoutes({ version: VERSION, store: jobStore, projects, executions, connections, extraRoutes }), projectForDigest, logger, authFailures, ui: (ctx) => ui.handle(ctx) });
  http.ready(app.callback());
  await db?.setUrl(url);
  wake.scheduler = scheduler;
  scheduler.start();
  poller.start();
  executions.dispatch();
  if (cluster) logger.log('info', `cluster mode: daemon ${owner}, lease ${cluster.leaseMs} ms`);
  logger.log('info', `service ${VERSION} listening on ${url} (data dir ${flags.dataDir}); web console at ${url}/ui`);
  let stopping: Promise<void> | undefined;
  return {
    server,
    store,
    url,
    scheduler,
    stop(immediate = false) {
      if (immediate) void executions.cancelAll('cancelled: daemon shutdown');
      stopping ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        ui.close();
        await scheduler.stop();
        await poller.stop();
        await executions.shutdown(immediate ? 0 : flags.gracePeriodMs);
        await member?.stop();
        await closed;
        await pool.destroy();
        await validator?.destroy();
        await closeAllDuckDbActors(); // each closes its file's instance on the file's thread, then the thread
        closeTreeIndexes();
        lines.close();
        await store.close();
        await db?.close();
        lock.release();
      })();
      return stopping;
    },
  };
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

export async function serveCommand(args: ParsedArgs, io: Io): Promise<number> {
  const flags = serveFlags(args);
  // One write per event-loop turn for the request log, not one per line.
  const stderr = batchedWriter(io.err);
  const logger = streamLogger({ level: 'info', json: (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON', write: stderr.write, isoTime: true });
  let daemon: RunningDaemon;
  let fenced: (() => void) | undefined;
  try {
    daemon = await startDaemon(flags, logger, { onFenced: () => fenced?.() });
  } catch (err) {
    stderr.flush();
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
  // A promise some code path forgot to handle must not end a daemon that serves others' work:
  // one error line (the cause chain, no stack) and the daemon goes on.
  const onUnhandled = (err: unknown) => logger.log('error', `unhandled failure: ${errorChain(err)}`);
  process.on('unhandledRejection', onUnhandled);
  return new Promise<number>((resolve) => {
    // Taken over by another daemon: its executions are no longer ours; stop at once and exit 1.
    fenced = () =>
      void daemon.stop(true).then(() => {
        stderr.flush();
        process.off('unhandledRejection', onUnhandled);
        resolve(1);
      });
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      signals++;
      logger.log('info', signals === 1 ? `${sig}: shutting down (waiting up to ${flags.gracePeriodMs / 1000}s for running executions)` : `${sig}: cancelling running executions now`);
      void daemon.stop(signals > 1).then(() => {
        stderr.flush();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        process.off('unhandledRejection', onUnhandled);
        resolve(0);
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
