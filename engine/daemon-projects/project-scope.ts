/**
 * One project as the services see it: its id, its file tree, the state store
 * and how to validate job files in it. Built per request by ProjectService;
 * holds nothing that outlives the request.
 */
import type { ConnectionRegistry } from '../connections/index.js';
import type { ProjectTree } from '../files/project-tree.js';
import { isUtf8 } from 'node:buffer';
import type { JobFileContext, JobFileValidation } from '../jobs/index.js';
import type { Logger } from '../log.js';
import type { StateStore } from '../state/store.js';
import { jobFileContext, jobFileSizeProblem, validateContent } from './job-files.js';
import { isYamlName } from '../jobs/index.js';

export interface ProjectScope {
  readonly projectId: string;
  readonly tree: ProjectTree;
  readonly store: StateStore;
  readonly connections: () => ConnectionRegistry;
  readonly now: () => Date;
  /** Where service-side warnings go (a file saved as plain although it looks like a job file). */
  readonly logger?: Logger;
  /** Validates a large job file off the event loop (the daemon's worker pool); absent: in-thread. */
  readonly validateOffThread?: (name: string, content: string) => Promise<JobFileValidation>;
}

/** Job files at least this large are validated off the event loop when the host can. */
export const OFF_THREAD_VALIDATION_BYTES = 64 * 1024;

/** Validation of content about to be saved: in-thread when small, on a worker when large. */
export async function validateForSave(p: ProjectScope, name: string, content: Buffer): Promise<JobFileValidation> {
  const tooLarge = isYamlName(name) && isUtf8(content) ? jobFileSizeProblem(content.length) : undefined;
  // Too large to parse, so its kind is unknown: refused as a YAML file that does not parse is.
  if (tooLarge) return { kind: 'invalid-yaml', problems: [{ path: '', message: tooLarge }] };
  if (p.validateOffThread && content.length >= OFF_THREAD_VALIDATION_BYTES && isUtf8(content)) return p.validateOffThread(name, content.toString('utf8'));
  return validateContent(name, content, validationContext(p));
}

export function validationContext(p: ProjectScope): JobFileContext {
  return jobFileContext(p.tree, p.connections);
}
