/** Overview: the project, its git settings with a Pull button, and its connections with a Test button each. */
import { testConnection, type ConnectionTest } from '../../../engine/connections/test-connection.js';
import { errorChain } from '../../../engine/errors.js';
import type { GitPullResult } from '../../../engine/git/git-sync.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, type UiRequest, type UiRoute } from '../ui-route.js';

interface Extras {
  readonly pull?: { readonly result?: GitPullResult; readonly error?: string };
  readonly tested?: { readonly name: string; readonly result: ConnectionTest };
}

export function overviewPages(deps: ConsoleDeps): UiRoute[] {
  async function overview(req: UiRequest, extras: Extras = {}) {
    const projectView = await deps.projects.project(req.projectId);
    const connections = deps.connections(req.projectId)
      .list()
      .map((c) => ({ ...c, ...(extras.tested?.name === c.name ? { test: extras.tested.result } : {}) }));
    return page('overview', { title: 'Overview', nav: 'overview', projectView, connections, ...(extras.pull ? { pull: extras.pull } : {}) });
  }
  return [
    { method: 'GET', pattern: /^\/ui\/?$/, handler: (req) => overview(req) },
    {
      method: 'POST',
      pattern: /^\/ui\/git\/pull$/,
      handler: async (req) => {
        if (!deps.gitPull) return overview(req, { pull: { error: 'git sync is not available in this daemon' } });
        try {
          return await overview(req, { pull: { result: await deps.gitPull(req.projectId) } });
        } catch (err) {
          return overview(req, { pull: { error: errorChain(err) } });
        }
      },
    },
    {
      method: 'POST',
      pattern: /^\/ui\/connections\/test$/,
      handler: async (req) => {
        const name = req.form.get('name') ?? '';
        const registry = deps.connections(req.projectId);
        const conn = registry.get(name);
        const result: ConnectionTest = conn ? await testConnection(conn, registry) : { valid: false, error: `connection ${name} not found` };
        return overview(req, { tested: { name, result } });
      },
    },
  ];
}
