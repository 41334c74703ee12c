/**
 * `~/.service/env.yaml` (SERVICE_HOME_DIR replaces `~/.service`): its `env:`
 * map is the last place `${VAR}` substitution and `env_var()` look. Read once per process; the file is small and rarely changes during
 * one command.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseYaml } from './yaml-lib.js';

export function serviceHomeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SERVICE_HOME_DIR && env.SERVICE_HOME_DIR !== '' ? env.SERVICE_HOME_DIR : join(homedir(), '.service');
}

const cache = new Map<string, Record<string, string>>();

/** The `env:` map of the home env file; `{}` when the file or key is missing or unreadable. */
export function homeEnvVars(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const file = join(serviceHomeDir(env), 'env.yaml');
  const hit = cache.get(file);
  if (hit) return hit;
  let vars: Record<string, string> = {};
  try {
    const doc = parseYaml(readFileSync(file, 'utf8')) as { env?: Record<string, unknown> } | null;
    if (doc && typeof doc.env === 'object' && doc.env !== null) {
      vars = Object.fromEntries(Object.entries(doc.env).map(([k, v]) => [k, v === null || v === undefined ? '' : String(v)]));
    }
  } catch {
    vars = {};
  }
  cache.set(file, vars);
  return vars;
}

/**
 * Variable lookup in the order: the step's/pipeline's env, the
 * process environment, then the home env file. Empty counts as unset.
 */
export function lookupVar(name: string, stepEnv?: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const source of [stepEnv, env]) {
    const v = source?.[name];
    if (v !== undefined && v !== '') return v;
  }
  const v = homeEnvVars(env)[name];
  return v !== undefined && v !== '' ? v : undefined;
}
