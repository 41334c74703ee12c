/**
 * The daemon with its web console for browser tests: `startDaemon` (the
 * real wiring of `service serve`) on an ephemeral port over a fresh temp
 * data dir, projects `acme` and `beta` with a token each, SERVICE_HOME_DIR
 * pointed at an empty temp home. `close()` stops the daemon and removes
 * the temp dir.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startDaemon, type RunningDaemon } from '../../daemon/start-daemon.js';
import type { Logger } from '../../engine/log.js';
import { projectPaths } from '../../engine/daemon-projects/project-paths.js';
import { sha256hex } from '../../engine/state/ids.js';

export interface UiProject {
  readonly id: string;
  readonly name: string;
  readonly token: string;
  readonly root: string;
  readonly envFile: string;
}

export interface UiDaemon {
  readonly url: string;
  readonly daemon: RunningDaemon;
  readonly base: string;
  readonly acme: UiProject;
  readonly beta: UiProject;
  readonly logs: string[];
  close(): Promise<void>;
}

export async function startUiDaemon(options: { readonly acmeEnv?: string } = {}): Promise<UiDaemon> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'service-ui-'));
  const dataDir = path.join(base, 'data');
  const home = path.join(base, 'home');
  await mkdir(home, { recursive: true });
  const savedHome = process.env.SERVICE_HOME_DIR;
  process.env.SERVICE_HOME_DIR = home;
  const logs: string[] = [];
  const logger: Logger = { log: (level, message) => void logs.push(`${level} ${message}`), enabled: () => true };
  const daemon = await startDaemon(
    { host: '127.0.0.1', port: 0, dataDir, state: path.join(dataDir, 'state.db'), maxRunning: 4, gracePeriodMs: 0, allowCommandSteps: false },
    logger,
  );
  const project = async (name: string, env = ''): Promise<UiProject> => {
    const p = await daemon.store.createProject({ name });
    const token = randomUUID();
    await daemon.store.addToken(p.id, sha256hex(token));
    const paths = projectPaths(dataDir, p.id);
    await mkdir(paths.files, { recursive: true });
    await writeFile(paths.envFile, env);
    return { id: p.id, name, token, root: paths.files, envFile: paths.envFile };
  };
  const acme = await project('acme', options.acmeEnv);
  const beta = await project('beta');
  return {
    url: daemon.url,
    daemon,
    base,
    acme,
    beta,
    logs,
    async close() {
      await daemon.stop(true);
      if (savedHome === undefined) delete process.env.SERVICE_HOME_DIR;
      else process.env.SERVICE_HOME_DIR = savedHome;
      await rm(base, { recursive: true, force: true });
    },
  };
}
