/**
 * The target connection a build will use, found before the project loads and
 * compiles: the config file and the connections only, no model file. The CLI
 * starts a PostgreSQL run's worker threads with it, so they boot while the
 * main thread loads its modules and compiles. Best effort: any problem
 * returns undefined, and the full preparation reports it where it always did.
 */
import { join } from 'node:path';
import { loadConnections, type Connection } from '../connections/index.js';
import type { Logger } from '../log.js';
import { loadConfig, resolveSettings, type SettingsFlags } from '../project/config.js';
import { resolveBuildPath } from '../project/load.js';

const silent: Logger = { enabled: () => false, log: () => {} };

export function peekTargetConnection(path: string, flags: SettingsFlags): Connection | undefined {
  try {
    const root = resolveBuildPath(path);
    const name = resolveSettings(loadConfig(root, { logger: silent }), flags).target;
    if (!name) return undefined;
    return loadConnections({ projectEnvFile: join(root, 'env.yaml'), env: process.env }).get(name);
  } catch {
    return undefined;
  }
}
