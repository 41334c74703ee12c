/**
 * Operator commands of cluster mode (docs/cluster.md), run on a machine that
 * reaches the PostgreSQL state store:
 *   service cluster status [--state URL] [--json]   the daemons, from the store itself
 *   service cluster token [--state URL] [--label L] print a new operator token once (for GET /cluster)
 */
import { ClusterDb, type DaemonView } from '../engine/cluster/cluster-db.js';
import { EngineError, errorChain } from '../engine/errors.js';
import { newToken, sha256hex } from '../engine/state/ids.js';
import { openStateStore, parseStateLocation } from '../engine/state/open-state-store.js';
import { parseFlags, STORE_FLAGS, storeLocation } from './daemon-flags.js';
import type { Io } from './io.js';

async function withCluster<T>(flags: Map<string, string>, fn: (db: ClusterDb) => Promise<T>): Promise<T> {
  const { state } = storeLocation(flags);
  if (parseStateLocation(state).kind !== 'postgres') {
    throw new EngineError('usage', 'cluster commands need a PostgreSQL state store (--state postgresql://…): a SQLite store belongs to one daemon');
  }
  // Opening the store runs its migrations, so a fresh database answers too.
  await (await openStateStore(state)).close();
  const db = ClusterDb.open(state);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function table(daemons: readonly DaemonView[]): string {
  const rows = [['DAEMON', 'STATE', 'HEARTBEAT AGE', 'RUNNING', 'MAX', 'VERSION', 'URL']];
  for (const d of daemons) rows.push([d.id, d.state, `${(d.heartbeat_age_ms / 1000).toFixed(1)}s`, String(d.running.length), String(d.max_running), d.version, d.url ?? '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

const HELP = `Usage: service cluster <status|token> [flags]

Operator commands of cluster mode: several daemons sharing one PostgreSQL state store.

  service cluster status [--state URL] [--json]    the daemons: state, heartbeat age, running executions, version, URL
  service cluster token [--state URL] [--label L]  print a new operator token once (Authorization: Service-Operator-Token <token> for GET /cluster)

--state must name the cluster's PostgreSQL state store (postgresql://…); --data-dir is accepted like the other operator commands.
`;

export async function clusterCommand(argv: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  try {
    if (sub === 'status') {
      const { flags, positionals } = parseFlags(rest, { ...STORE_FLAGS, json: 'bool' });
      if (positionals.length > 0) throw new EngineError('usage', `unexpected argument: ${positionals[0]}`);
      return await withCluster(flags, async (db) => {
        const daemons = await db.listDaemons();
        io.out(flags.get('json') === 'true' ? `${JSON.stringify({ daemons }, null, 2)}\n` : table(daemons));
        return 0;
      });
    }
    if (sub === 'token') {
      const { flags, positionals } = parseFlags(rest, { ...STORE_FLAGS, label: 'value' });
      if (positionals.length > 0) throw new EngineError('usage', `unexpected argument: ${positionals[0]}`);
      return await withCluster(flags, async (db) => {
        const token = newToken();
        await db.addOperatorToken(sha256hex(token), flags.get('label') ?? '');
        io.out(`${token}\n`);
        return 0;
      });
    }
    throw new EngineError('usage', `unknown cluster command "${sub ?? ''}", expected status or token`);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'usage') {
      io.err(`error: ${err.message}\nRun 'service --help' for usage.\n`);
      return 2;
    }
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
}
