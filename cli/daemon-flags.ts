/**
 * The options of `service serve` and of the operator commands' state store,
 * as the daemon wants them, from the parsed command line (the value checks
 * are usage errors naming the flag, exit 2).
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { EngineError } from '../engine/errors.js';
import type { DaemonFlags } from '../daemon/daemon-options.js';
import { flagSet, flagValue, parseCommandLine, type ParsedArgs } from './parse-command-line.js';

const usage = (m: string) => new EngineError('usage', m);

/** `(<int>(s|m|h|d|w))+` in milliseconds. */
export function parseJobDuration(text: string): number | undefined {
  if (!/^(\d+(s|m|h|d|w))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  let ms = 0;
  for (const m of text.matchAll(/(\d+)(s|m|h|d|w)/g)) ms += Number(m[1]) * unit[m[2]!]!;
  return ms;
}

/** `--data-dir` (default ~/.service/data) and `--state` (default <data-dir>/state.db). */
export function storeLocation(a: ParsedArgs): { dataDir: string; state: string } {
  const dataDir = resolve(flagValue(a, 'data-dir') ?? join(homedir(), '.service', 'data'));
  return { dataDir, state: flagValue(a, 'state') ?? join(dataDir, 'state.db') };
}

export function serveFlags(a: ParsedArgs): DaemonFlags {
  const portText = flagValue(a, 'port') ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw usage(`invalid argument "${portText}" for "--port": expected a port number`);
  const runningText = flagValue(a, 'max-running') ?? '4';
  const maxRunning = Number(runningText);
  if (!/^\d+$/.test(runningText) || maxRunning < 1) throw usage(`invalid argument "${runningText}" for "--max-running": expected a positive integer`);
  const graceText = flagValue(a, 'grace-period') ?? '60s';
  const grace = parseJobDuration(graceText);
  if (grace === undefined) throw usage(`invalid argument "${graceText}" for "--grace-period": expected a duration like 60s or 1m30s`);
  return {
    host: flagValue(a, 'host') ?? '127.0.0.1',
    port,
    ...storeLocation(a),
    maxRunning,
    gracePeriodMs: grace,
    allowCommandSteps: flagSet(a, 'allow-command-steps'),
  };
}

/** `service serve <argv…>`'s options (for callers that start a daemon in-process). */
export function parseServeFlags(argv: readonly string[]): DaemonFlags {
  const line = parseCommandLine(['serve', ...argv]);
  if (line.kind !== 'command') throw usage('expected the options of service serve');
  return serveFlags(line.args);
}
