/**
 * `GET /cluster` (cluster mode): every daemon sharing the state store, with
 * its heartbeat, lease, state and running executions. It is the operator's
 * view, not a project's: it answers to an operator token
 * (`Authorization: Service-Operator-Token <token>`, made with
 * `service cluster token` by someone who can reach the state store), never
 * to a project token.
 */
import type { DaemonView } from '../../engine/cluster/cluster-db.js';
import { sha256hex } from '../../engine/state/ids.js';
import type { AuthFailureLimiter } from '../auth-limit.js';
import { HttpError } from '../http-error.js';
import { route, type Route } from '../route.js';

const OPERATOR = /^Service-Operator-Token ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/i;

export interface ClusterRouteDeps {
  /** This daemon's id. */
  readonly self: string;
  readonly daemons: () => Promise<DaemonView[]>;
  readonly operatorDigestKnown: (digest: string) => Promise<boolean>;
  /** Failed operator tokens count toward the address's limit on failed authentication. */
  readonly authFailures?: AuthFailureLimiter;
}

export function clusterRoutes(deps: ClusterRouteDeps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/cluster',
      summary: 'The daemons sharing this state store: heartbeat, lease, state, running executions (operator token)',
      auth: false,
      operator: true,
      handler: async ({ ctx }) => {
        const m = OPERATOR.exec(ctx.get('authorization'));
        if (!m || !(await deps.operatorDigestKnown(sha256hex(m[1]!.toLowerCase())))) {
          throw deps.authFailures?.fail(ctx.ip) ?? new HttpError(401, 'unauthorized', 'missing or invalid operator token');
        }
        return { daemon: deps.self, daemons: await deps.daemons() };
      },
    }),
  ];
}
