/**
 * `POST /project/git/pull`: runs the pull and answers
 * its GitPullResult. The body must be `{}`. The two git failures without a
 * status of their own in the engine's mapping are answered here: a branch
 * missing on the remote → 422 `conflict`, a failed fetch → 502 `internal`
 * (`git fetch failed: …`, credentials already stripped).
 */
import { object } from 'superstruct';
import { GitBranchMissingError, GitFetchError, type GitSync } from '../../engine/git/index.js';
import { HttpError } from '../http-error.js';
import { route, type Route } from '../route.js';

export function gitRoutes(deps: { readonly git: GitSync }): Route[] {
  return [
    route({
      method: 'POST',
      path: '/project/git/pull',
      summary: "Sync the project tree from its git branch now (remote wins); default jobs for new valid job files",
      auth: true,
      body: object({}),
      handler: async ({ projectId }) => {
        try {
          return await deps.git.pull(projectId);
        } catch (err) {
          if (err instanceof GitBranchMissingError) throw new HttpError(422, 'conflict', err.message);
          if (err instanceof GitFetchError) throw new HttpError(502, 'internal', err.message);
          throw err;
        }
      },
    }),
  ];
}
