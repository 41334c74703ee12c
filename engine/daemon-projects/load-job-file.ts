/**
 * A job file as an execution loads it when it starts: read and
 * validated again, because the file may have changed since the run was
 * requested. Failures are data (`ok: false` with the reason), which the
 * execution records as its `error`.
 */
import type { JobFile } from '../jobs/index.js';
import { jobFileSizeProblem, readContent, validateContent } from './job-files.js';
import { validationContext, type ProjectScope } from './project-scope.js';


/** A validated job file with its parsed model, or why it cannot run. */
export type LoadedJobFile = { readonly ok: true; readonly file: JobFile } | { readonly ok: false; readonly error: string };

const quote = (s: string): string => JSON.stringify(s);

export async function loadJobFile(p: ProjectScope, fileName: string): Promise<LoadedJobFile> {
  const tooLarge = jobFileSizeProblem((await p.tree.stat(fileName).catch(() => null))?.size ?? 0);
  if (tooLarge) return { ok: false, error: `job file ${quote(fileName)} is invalid: ${tooLarge}` };
  const content = await readContent(p.tree, fileName).catch(() => null);
  if (content === null) return { ok: false, error: `job file ${quote(fileName)} does not exist` };
  const v = validateContent(fileName, content, validationContext(p));
  if (v.kind === null) return { ok: false, error: `file ${quote(fileName)} is not a job file` };
  if (!('parsed' in v) || v.parsed === undefined) return { ok: false, error: `job file ${quote(fileName)} is invalid` };
  return { ok: true, file: v.parsed };
}
