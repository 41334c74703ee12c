/** Cluster-mode settings from the environment: defaults, bounds, errors naming the variable. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterSetup, DEFAULT_LEASE_MS } from '../daemon/cluster-setup.js';
import type { DaemonFlags } from '../daemon/daemon-options.js';

const flags = {} as DaemonFlags;
const lines: string[] = [];
const logger = { log: (_level: string, message: string) => void lines.push(message) } as never;

test('SERVICE_LEASE_SECONDS: 15 s by default, decimals allowed, anything else refused by name', () => {
  assert.equal(clusterSetup(flags, logger, {}).leaseMs, DEFAULT_LEASE_MS);
  assert.equal(clusterSetup(flags, logger, { SERVICE_LEASE_SECONDS: '2.5' }).leaseMs, 2500);
  for (const bad of ['abc', '0', '0.1', '-3', '7200']) {
    assert.throws(() => clusterSetup(flags, logger, { SERVICE_LEASE_SECONDS: bad }), { message: `SERVICE_LEASE_SECONDS must be a number of seconds from 0.3 to 3600, got "${bad}"` });
  }
});

test('SERVICE_SCHEDULER_CLOCK runs the scheduler clock faster from an instant, with an offset, and says so', () => {
  lines.length = 0;
  const t0 = Date.now() - 1000;
  const setup = clusterSetup(flags, logger, { SERVICE_SCHEDULER_CLOCK: `${t0}:60:-5000` });
  assert.equal(setup.clock?.clockRate, 60);
  const ahead = setup.clock!.now().getTime() - t0;
  // About one real second has passed since t0: about sixty on this clock, minus the offset.
  assert.ok(ahead >= 60 * 1000 - 5000 && ahead < 60 * 1000 * 10, String(ahead));
  assert.match(lines.join('\n'), /SERVICE_SCHEDULER_CLOCK: the scheduler's clock runs 60x from .*, offset -5000 ms \(a test setting\)/);
  assert.throws(() => clusterSetup(flags, logger, { SERVICE_SCHEDULER_CLOCK: 'fast' }), { message: 'SERVICE_SCHEDULER_CLOCK must be <epoch ms>:<rate>[:<offset ms>], got "fast"' });
  assert.equal(clusterSetup(flags, logger, {}).clock, undefined);
});
