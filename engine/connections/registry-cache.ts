/**
 * Connection registries for a long-lived process: env files
 * are re-read only when their modification time changes, so a request or a
 * job-file validation does not parse YAML every time, and an operator's edit
 * is still seen without a restart.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { serviceHomeDir } from '../home-env.js';
import { loadConnections, type ConnectionRegistry } from './load-connections.js';

const mtime = (file: string): number => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

export function cachedConnections(): (projectEnvFile: string) => ConnectionRegistry {
  const cache = new Map<string, { stamp: string; registry: ConnectionRegistry }>();
  const hostFile = () => join(serviceHomeDir(process.env), 'env.yaml');
  return (projectEnvFile) => {
    const stamp = `${mtime(projectEnvFile)}:${mtime(hostFile())}`;
    const hit = cache.get(projectEnvFile);
    if (hit && hit.stamp === stamp) return hit.registry;
    const registry = loadConnections({ projectEnvFile });
    cache.set(projectEnvFile, { stamp, registry });
    return registry;
  };
}
