/**
 * The read-only scopes of a pipeline run: `timestamp.*`
 * (UTC at execution start), `execution.*`, and `env.*` — the file's `env:`
 * map with `${NAME}` resolved, under the job's `config.vars` and the run's
 * `vars` — plus the `${NAME}` lookup order: run vars, job vars, the file's `env:`, then the env
 * files and the process environment.
 */
import type { EnvValue } from '../jobs/index.js';
import { Unresolved, type Value } from './evaluate.js';
import { substituteVars, type VarLookup } from './render.js';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

export function timestampScope(d: Date): Record<string, Value> {
  const YYYY = pad(d.getUTCFullYear(), 4);
  const MM = pad(d.getUTCMonth() + 1);
  const DD = pad(d.getUTCDate());
  const HH = pad(d.getUTCHours());
  const mi = pad(d.getUTCMinutes());
  const ss = pad(d.getUTCSeconds());
  return {
    rfc3339: `${YYYY}-${MM}-${DD}T${HH}:${mi}:${ss}Z`,
    date: `${YYYY}-${MM}-${DD}`,
    datetime: `${YYYY}-${MM}-${DD} ${HH}:${mi}:${ss}`,
    unix: Math.floor(d.getTime() / 1000),
    YYYY,
    MM,
    DD,
    HH,
    file_name: `${YYYY}_${MM}_${DD}_${HH}${mi}${ss}`,
  };
}

export interface ExecutionInfo {
  readonly exec_id: string;
  readonly job_id: string;
  readonly job_name: string;
  readonly file_name: string;
  readonly trigger: string;
  readonly start_time: string;
}

export function executionScope(e: ExecutionInfo): Record<string, Value> {
  return { exec_id: e.exec_id, job_id: e.job_id, job_name: e.job_name, file_name: e.file_name, trigger: e.trigger, start_time: e.start_time };
}

const own = (o: Readonly<Record<string, unknown>>, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function define(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export interface PipelineVars {
  /** `env.*`: values, or Unresolved for a file entry whose `${NAME}` is not set. */
  readonly env: Record<string, unknown>;
  /** `${NAME}`: run vars, job vars, the file's env, then the env layers. */
  readonly lookup: VarLookup;
}

/**
 * `runVars` over `jobVars` over the file's `env:` (whose own `${NAME}` resolve
 * from the vars and the env layers, never from the file's env itself).
 */
export function pipelineVars(
  fileEnv: Readonly<Record<string, EnvValue>>,
  jobVars: Readonly<Record<string, unknown>>,
  runVars: Readonly<Record<string, unknown>>,
  layers: VarLookup,
): PipelineVars {
  const fromVars = (name: string): string | undefined => {
    for (const vars of [runVars, jobVars]) if (own(vars, name)) return String(vars[name]);
    return undefined;
  };
  const outer: VarLookup = (name) => fromVars(name) ?? layers(name);
  const env: Record<string, unknown> = {};
  const fileText = new Map<string, string>();
  for (const [k, v] of Object.entries(fileEnv)) {
    if (typeof v !== 'string') {
      define(env, k, v);
      fileText.set(k, String(v));
      continue;
    }
    try {
      const text = substituteVars(v, outer);
      define(env, k, text);
      fileText.set(k, text);
    } catch (err) {
      define(env, k, new Unresolved(err instanceof Error ? err.message : String(err)));
    }
  }
  for (const vars of [jobVars, runVars]) for (const [k, v] of Object.entries(vars)) define(env, k, v as Value);
  const lookup: VarLookup = (name) => fromVars(name) ?? fileText.get(name) ?? layers(name);
  return { env, lookup };
}
