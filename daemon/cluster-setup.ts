/**
 * Cluster-mode settings of `service serve` that come from the environment
 * (docs/cluster.md), read once at start; a bad value stops the start with an
 * error naming the variable:
 * - `SERVICE_LEASE_SECONDS` (default 15): how long a daemon may go without a
 *   heartbeat before another takes its executions over;
 * - `SERVICE_SCHEDULER_CLOCK` (tests only): `<epoch ms>:<rate>[:<offset ms>]`
 *   runs the scheduler's clock `rate` times faster from that instant, shifted
 *   by the offset, so a suite can watch minutes of schedules in seconds and
 *   give daemons clocks that disagree. Announced with a warning.
 */
import { EngineError } from '../engine/errors.js';
import type { Logger } from '../engine/log.js';
import type { DaemonFlags } from './daemon-options.js';

export const DEFAULT_LEASE_MS = 15_000;

export interface ClusterSetup {
  readonly leaseMs: number;
  readonly clock?: { readonly now: () => Date; readonly clockRate: number };
}

export function clusterSetup(_flags: DaemonFlags, logger: Logger, env: NodeJS.ProcessEnv = process.env): ClusterSetup {
  let leaseMs = DEFAULT_LEASE_MS;
  const lease = env.SERVICE_LEASE_SECONDS;
  if (lease !== undefined && lease !== '') {
    const s = Number(lease);
    if (!Number.isFinite(s) || s < 0.3 || s > 3600) throw new EngineError('usage', `SERVICE_LEASE_SECONDS must be a number of seconds from 0.3 to 3600, got "${lease}"`);
    leaseMs = Math.round(s * 1000);
  }
  const spec = env.SERVICE_SCHEDULER_CLOCK;
  if (spec === undefined || spec === '') return { leaseMs };
  const m = /^(\d+):(\d+(?:\.\d+)?)(?::(-?\d+))?$/.exec(spec);
  if (!m || Number(m[2]) <= 0) throw new EngineError('usage', `SERVICE_SCHEDULER_CLOCK must be <epoch ms>:<rate>[:<offset ms>], got "${spec}"`);
  const [t0, rate, offset] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  logger.log('warn', `SERVICE_SCHEDULER_CLOCK: the scheduler's clock runs ${rate}x from ${new Date(t0).toISOString()}, offset ${offset} ms (a test setting)`);
  return { leaseMs, clock: { now: () => new Date(t0 + (Date.now() - t0) * rate + offset), clockRate: rate } };
}
