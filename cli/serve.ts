/**
 * `service serve`: one process with the HTTP API, the scheduler
 * and the execution workers. Start: open and migrate the store → restart
 * recovery → schedules → listen → dispatch. Shutdown on SIGTERM or
 * SIGINT: stop accepting, stop the scheduler and dispatch, wait up to the
 * grace period for running executions, cancel the rest, close the store,
 * exit 0; a second signal cancels at once.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExecutionService } from '../actors/daemon/executions.js';
import { GitPoller } from '../actors/daemon/git-poller.js';
import { lineRouter } from '../actors/daemon/line-router.js';
import { cleanUpInterrupted } from '../actors/daemon/recovery-cleanup.js';
import { Scheduler } from '../actors/daemon/scheduler.js';
import { closeAllDuckDbActors } from '../actors/duckdb-actor.js';
import { TaskPool } from '../actors/pool.js';
import { readEnvFile } from '../engine/connections/index.js';
import { cachedConnections } from '../engine/connections/registry-cache.js';
import { errorChain } from '../engine/errors.js';
import { sweepStagingFiles } from '../engine/files/sweep-staging.js';
import { closeTreeIndexes } from '../engine/files/tree-index.js';
import { GitSync } from '../engine/git/index.js';
import { homeEnvVars } from '../engine/home-env.js';
import { batchedWriter, streamLogger, type Logger } from '../engine/log.js';
import { projectPaths } from '../engine/projects/project-paths.js';
import { ProjectService } from '../engine/projects/project-service.js';
import { lockDataDir } from '../engine/state/daemon-lock.js';
import { openStateStore, parseStateLocation } from '../engine/state/open-state-store.js';
import type { StateStore } from '../engine/state/store.js';
import { createApp } from '../http/app.js';
import { installClientErrorHandler } from '../http/client-error.js';
import { gitRoutes } from '../http/routes/git.js';
import { apiRoutes } from '../http/routes/index.js';
import { parseServeFlags, type DaemonFlags } from './daemon-flags.js';
import type { Io } from './io.js';
import { VERSION } from './version.js';

export interface RunningDaemon {
  readonly server: Server;
  readonly store: StateStore;
  readonly url: string;
  /** Graceful stop; `immediate` skips the wait. */
  stop(immediate?: boolean): Promise<void>;
}

export async function startDaemon(flags: DaemonFlags, logger: Logger): Promise<RunningDaemon> {
  const location = parseStateLocation(flags.state);
  const lock = lockDataDir(flags.dataDir, location.kind === 'sqlite' ? location.path : undefined);
  let store: StateStore;
  try {
    store = await openStateStore(flags.state);
  } catch (err) {
    lock.release();
    throw err;
  }
  // The claim owner is the same on every start from this data directory and host, so
  // recovery can tell this directory's dead runs from those of other daemons sharing a
  // PostgreSQL store: holding the directory's lock proves the previous owner is gone.
  const owner = `daemon-${hostname()}-${createHash('sha256').update(flags.dataDir).digest('hex').slice(0, 12)}`;
  const registries = cachedConnections();
  const connections = (projectId: string) => registries(projectPaths(flags.dataDir, projectId).envFile);
  // Execution tasks (build nodes, streams, queries) mostly wait on a database: each thread runs several.
  const pool = new TaskPool({ maxThreads: Math.max(2, flags.maxRunning), minThreads: 1, concurrentTasksPerWorker: 4 });
  // Large job-file validations get a thread of their own: behind long-running execution tasks
  // in the main pool, a save would wait for a query to end. Started on first use.
  let validator: TaskPool | undefined;
  const validationPool = () => (validator ??= new TaskPool({ maxThreads: 1, minThreads: 0, idleTimeout: 60_000 }));
  const projects = new ProjectService({
    dataDir: flags.dataDir,
    store,
    connections,
    logger,
    validateOffThread: (projectId, name, content) => {
      const paths = projectPaths(flags.dataDir, projectId);
      return validationPool().run({ type: 'jobfile.validate', name, content, root: paths.files, envFile: paths.envFile });
    },
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
    loadJobFile: (projectId, fileName) => projects.loadJobFile(projectId, fileName),
    envLookup: (projectId) => {
      const projectEnv = readEnvFile(projectPaths(flags.dataDir, projectId).envFile, 'project', flags.dataDir).env;
      const hostEnv = homeEnvVars();
      return (name) => projectEnv[name] ?? hostEnv[name] ?? (process.env[name] || undefined);
    },
  });
  const swept = await sweepStagingFiles(join(flags.dataDir, 'projects'));
  if (swept > 0) logger.log('warn', `removed ${swept} staging file(s) left by an interrupted write`);
  const interrupted = await executions.recover();
  if (interrupted.length > 0) {
    logger.log('warn', `marked ${interrupted.length} execution(s) interrupted: the daemon stopped while they were running`);
    const records = (await Promise.all(interrupted.map((id) => store.findExecution(id)))).filter((e) => e !== undefined);
    await cleanUpInterrupted(records, connections, logger);
  }
  const scheduler = new Scheduler({ store, logger, run: (job) => executions.requestRun(job, {}, 'schedule') });
  const git = new GitSync({ dataDir: flags.dataDir, store, scope: (id) => projects.scope(id), logger });
  const poller = new GitPoller({ store, logger, pull: (id, options) => git.pull(id, options) });
  const app = createApp({ routes: apiRoutes({ version: VERSION, store, projects, executions, connections, extraRoutes: gitRoutes({ git }) }), projectForDigest: (d) => store.projectIdForToken(d), logger });
  const server = createServer(app.callback());
  installClientErrorHandler(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(flags.port, flags.host, () => resolve());
  });
  const addr = server.address();
  const url = typeof addr === 'object' && addr ? `http://${flags.host}:${addr.port}` : `http://${flags.host}:${flags.port}`;
  scheduler.start();
  poller.start();
  executions.dispatch();
  logger.log('info', `service ${VERSION} listening on ${url} (data dir ${flags.dataDir})`);
  let stopping: Promise<void> | undefined;
  return {
    server,
    store,
    url,
    stop(immediate = false) {
      if (immediate) void executions.cancelAll('cancelled: daemon shutdown');
      stopping ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        await scheduler.stop();
        await poller.stop();
        await executions.shutdown(immediate ? 0 : flags.gracePeriodMs);
        await closed;
        await pool.destroy();
        await validator?.destroy();
        await closeAllDuckDbActors(); // each closes its file's instance on the file's thread, then the thread
        closeTreeIndexes();
        lines.close();
        await store.close();
        lock.release();
      })();
      return stopping;
    },
  };
}

export async function serveCommand(argv: readonly string[], io: Io): Promise<number> {
  const flags = parseServeFlags(argv);
  // One write per event-loop turn for the request log, not one per line.
  const stderr = batchedWriter(io.err);
  const logger = streamLogger({ level: 'info', json: (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON', write: stderr.write, isoTime: true });
  let daemon: RunningDaemon;
  try {
    daemon = await startDaemon(flags, logger);
  } catch (err) {
    stderr.flush();
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      signals++;
      logger.log('info', signals === 1 ? `${sig}: shutting down (waiting up to ${flags.gracePeriodMs / 1000}s for running executions)` : `${sig}: cancelling running executions now`);
      void daemon.stop(signals > 1).then(() => {
        stderr.flush();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve(0);
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
