/**
 * The Project resource: git settings with the URL's
 * credentials replaced by `***`, and counts of files, jobs and executions.
 */
import type { GitRecord, StateStore } from '../state/store.js';
import type { ProjectScope } from './project-scope.js';
import { notFound } from './project-errors.js';

export interface ProjectView {
  readonly id: string;
  readonly name: string;
  readonly git: GitRecord | null;
  readonly counts: { readonly files: number; readonly jobs: number; readonly executions: number };
}

/** `https://user:token@host/x.git` → `https://***@host/x.git`; SSH forms (`git@host:x.git`) name no secret. */
export function redactGitUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/i, '$1***@');
}

export async function projectView(p: ProjectScope, store: StateStore): Promise<ProjectView> {
  const project = await store.getProject(p.projectId);
  // A token outliving its project: answer as for any object that does not exist.
  if (!project) throw notFound(`project ${p.projectId} not found`);
  const counts = await store.projectCounts(p.projectId);
  const git = project.git ? { ...project.git, url: redactGitUrl(project.git.url) } : null;
  return { id: project.id, name: project.name, git, counts: { files: await p.tree.countFiles(), jobs: counts.jobs, executions: counts.executions } };
}
