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
import { storeLocation } from './daemon-flags.js';
import type { Io } from './io.js';
import { flagSet, flagValue, type ParsedArgs } from './parse-command-line.js';

async function withCluster<T>(a: ParsedArgs, fn: (db: ClusterDb) => Promise<T>): Promise<T> {
  const { state } = storeLocation(a);
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

/** `service cluster status`: the daemons, read from the store itself. */
export async function clusterStatus(a: ParsedArgs, io: Io): Promise<number> {
  return guarded(io, () =>
    withCluster(a, async (db) => {
      const daemons = await db.listDaemons();
      io.out(flagSet(a, 'json') ? `${JSON.stringify({ daemons }, null, 2)}\n` : table(daemons));
      return 0;
    }),
  );
}

/** `service cluster token`: a new operator token, printed once (only its SHA-256 is stored). */
export async function clusterToken(a: ParsedArgs, io: Io): Promise<number> {
  return guarded(io, () =>
    withCluster(a, async (db) => {
      const token = newToken();
      await db.addOperatorToken(sha256hex(token), flagValue(a, 'label') ?? '');
      io.out(`${token}\n`);
      return 0;
    }),
  );
}

/** Usage errors found once the store is named (a SQLite path) are rethrown for the usual exit 2; failures exit 1. */
async function guarded(io: Io, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof EngineError && err.code === 'usage') throw err;
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
}
