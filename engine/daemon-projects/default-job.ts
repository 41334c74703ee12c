/**
 * Default jobs: the job a valid job file gets when it has
 * none, named after the file, inactive, every other field at its default.
 * It follows its file through renames and kind changes and is deleted with it.
 */
import path from 'node:path';
import type { JobKind } from '../jobs/index.js';
import type { JobRecord, NewJob } from '../state/store.js';
import { DEFAULT_CONFIG, modeApplies } from './job-input.js';

/** The file name without directory and last extension (`replications/users.yaml` → `users`). */
export function defaultJobName(fileName: string): string {
  const base = path.posix.basename(fileName);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  return stem.slice(0, 200);
}

export function newDefaultJob(projectId: string, fileName: string, kind: JobKind): NewJob {
  return {
    project_id: projectId,
    name: defaultJobName(fileName),
    type: kind,
    file_name: fileName,
    description: '',
    active: false,
    default: true,
    streams: [],
    tags: [],
    schedules: [],
    timezone: 'UTC',
    policy: 'queue',
    config: DEFAULT_CONFIG,
  };
}

/** A job moved to another kind: fields the new kind does not allow are cleared. */
export function retyped(job: JobRecord, kind: JobKind): JobRecord {
  return {
    ...job,
    type: kind,
    streams: kind === 'replication' ? job.streams : [],
    config: { ...job.config, mode: modeApplies(kind) ? job.config.mode : null },
  };
}
