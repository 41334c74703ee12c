/**
 * The value rules of a job save that need no file and
 * no store: lengths, enums, ranges, cron expressions, the timezone and
 * `config.vars`. The HTTP layer has already checked the JSON shape; this
 * turns a shape-valid input into the stored fields with every default
 * filled in, or throws 400 with the contract's message.
 */
import { EngineError } from '../errors.js';
import { JOB_KINDS } from '../jobs/job-file-context.js';
import { REPLICATION_MODES } from '../jobs/replication-model.js';
import { isValidTimezone, parseCron } from '../jobs/cron.js';
import type { JobConfig, JobPolicy, JobRecord, JobType } from '../state/store.js';

export interface JobConfigInput {
  readonly mode?: string;
  readonly threads?: number;
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly timeout?: number;
  readonly retries?: number;
}

/** Input fields; read-only ones a client sends back are dropped before this. */
export interface JobInput {
  readonly id?: string;
  readonly name: string;
  readonly type: string;
  readonly file_name: string;
  readonly description?: string;
  readonly active?: boolean;
  readonly streams?: readonly string[];
  readonly tags?: readonly string[];
  readonly schedules?: readonly string[];
  readonly timezone?: string;
  readonly policy?: string;
  readonly config?: JobConfigInput;
}

/** A job's stored fields decided by its input (no id, project, default flag or times). */
export type JobFields = Pick<JobRecord, 'name' | 'type' | 'file_name' | 'description' | 'active' | 'streams' | 'tags' | 'schedules' | 'timezone' | 'policy' | 'config'>;

export const JOB_POLICIES: readonly JobPolicy[] = ['queue', 'skip', 'cancel'];
export const MAX_SCHEDULES = 20;
export const MAX_THREADS = 16;
export const MAX_RETRIES = 10;
/** Seconds: the largest timer Node arms (2^31−1 ms), as for pipeline step timeouts. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;
/** Entries of a `vars` map (job config or run override): each becomes part of every execution's record. */
export const MAX_VARS = 1000;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const DEFAULT_CONFIG: JobConfig = { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 };

const quote = (s: string): string => JSON.stringify(s);
const bad = (message: string): EngineError => new EngineError('bad_request', message);

export function isJobType(t: string): t is JobType {
  return (JOB_KINDS as readonly string[]).includes(t);
}

/** 400 unless `type` is one of the four job kinds. */
export function jobType(t: string): JobType {
  if (!isJobType(t)) throw bad(`type must be one of ${JOB_KINDS.join(', ')}`);
  return t;
}

/** 400 unless `mode` is a replication mode. */
export function checkMode(mode: string): void {
  if (!(REPLICATION_MODES as readonly string[]).includes(mode)) throw bad(`mode must be one of ${REPLICATION_MODES.join(', ')}`);
}

/** Modes apply to replication jobs and to the replication steps of pipelines. */
export const modeApplies = (type: JobType): boolean => type === 'replication' || type === 'pipeline';

function between(value: number, min: number, max: number, path: string): number {
  if (value < min || value > max) throw bad(`field ${quote(path)} must be between ${min} and ${max}`);
  return value;
}

/** `vars` maps (job config and run overrides): names like identifiers, scalar values. */
export function checkVars(vars: Readonly<Record<string, unknown>>, path: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  const entries = Object.entries(vars);
  if (entries.length > MAX_VARS) throw bad(`field ${quote(path)} must have at most ${MAX_VARS} entries`);
  for (const [k, v] of entries) {
    if (!VAR_NAME.test(k)) throw bad(`invalid variable name ${quote(k)} in ${path}`);
    if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isFinite(v))) {
      throw bad(`field ${quote(`${path}.${k}`)} must be a string, a number or a boolean`);
    }
    out[k] = v;
  }
  return out;
}

/**
 * Checks the input's values and fills the defaults (a full replace:
 * omitted optional fields take their defaults). `root` is the body path of
 * the job object, for messages.
 */
export function jobFields(input: JobInput, root = 'job'): JobFields {
  const p = (field: string) => `${root}.${field}`;
  const name = input.name;
  if (name.trim() === '' || name.length > 200) throw bad(`field ${quote(p('name'))} must be 1 to 200 characters and not blank`);
  const type = jobType(input.type);
  const description = input.description ?? '';
  if (description.length > 2000) throw bad(`field ${quote(p('description'))} must be at most 2000 characters`);
  const streams = [...(input.streams ?? [])];
  if (streams.length > 0 && type !== 'replication') throw bad('streams are only allowed for replication jobs');
  streams.forEach((s, i) => {
    if (s === '') throw bad(`field ${quote(`${p('streams')}[${i}]`)} must not be empty`);
  });
  const tags = [...(input.tags ?? [])];
  tags.forEach((t, i) => {
    if (t.length < 1 || t.length > 64) throw bad(`field ${quote(`${p('tags')}[${i}]`)} must be 1 to 64 characters`);
  });
  const schedules = [...(input.schedules ?? [])];
  if (schedules.length > MAX_SCHEDULES) throw bad(`field ${quote(p('schedules'))} must have at most ${MAX_SCHEDULES} entries`);
  schedules.forEach((s, i) => {
    if (!parseCron(s)) throw bad(`invalid cron expression ${quote(s)} in schedules[${i}]`);
  });
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimezone(timezone)) throw bad(`unknown timezone ${quote(timezone)}`);
  const policy = input.policy ?? 'queue';
  if (!(JOB_POLICIES as readonly string[]).includes(policy)) throw bad(`policy must be one of ${JOB_POLICIES.join(', ')}`);
  const c = input.config ?? {};
  const mode = c.mode ?? null;
  if (mode !== null) {
    if (!modeApplies(type)) throw bad(`config.mode does not apply to ${type} jobs`);
    checkMode(mode);
  }
  const config: JobConfig = {
    mode,
    threads: between(c.threads ?? DEFAULT_CONFIG.threads, 1, MAX_THREADS, p('config.threads')),
    vars: checkVars(c.vars ?? {}, p('config.vars')),
    timeout: between(c.timeout ?? DEFAULT_CONFIG.timeout, 0, MAX_TIMEOUT_SECONDS, p('config.timeout')),
    retries: between(c.retries ?? DEFAULT_CONFIG.retries, 0, MAX_RETRIES, p('config.retries')),
  };
  return { name, type, file_name: input.file_name, description, active: input.active ?? false, streams, tags, schedules, timezone, policy: policy as JobPolicy, config };
}
