/**
 * Flags of `service serve` and the operator commands:
 * parsed strictly, with the same `error: …` / exit 2 convention as the build
 * commands.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { EngineError } from '../engine/errors.js';

export interface DaemonFlags {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly state: string;
  readonly maxRunning: number;
  readonly gracePeriodMs: number;
  readonly allowCommandSteps: boolean;
}

const usage = (m: string) => new EngineError('usage', m);

/** `(<int>(s|m|h|d|w))+` in milliseconds. */
export function parseJobDuration(text: string): number | undefined {
  if (!/^(\d+(s|m|h|d|w))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  let ms = 0;
  for (const m of text.matchAll(/(\d+)(s|m|h|d|w)/g)) ms += Number(m[1]) * unit[m[2]!]!;
  return ms;
}

/** Generic `--flag value` / `--flag=value` / boolean parsing against a table. */
export function parseFlags(argv: readonly string[], table: Readonly<Record<string, 'value' | 'bool'>>): { flags: Map<string, string>; positionals: string[] } {
  const flags = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const kind = table[name];
    if (!kind) throw usage(`unknown flag: --${name}`);
    if (kind === 'bool') {
      flags.set(name, eq >= 0 ? arg.slice(eq + 1) : 'true');
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw usage(`flag needs an argument: --${name}`);
    flags.set(name, value);
  }
  return { flags, positionals };
}

export const STORE_FLAGS = { 'data-dir': 'value', state: 'value' } as const;

export function storeLocation(flags: Map<string, string>): { dataDir: string; state: string } {
  const dataDir = resolve(flags.get('data-dir') ?? join(homedir(), '.service', 'data'));
  return { dataDir, state: flags.get('state') ?? join(dataDir, 'state.db') };
}

export function parseServeFlags(argv: readonly string[]): DaemonFlags {
  const { flags, positionals } = parseFlags(argv, { ...STORE_FLAGS, host: 'value', port: 'value', 'max-running': 'value', 'grace-period': 'value', 'allow-command-steps': 'bool' });
  if (positionals.length > 0) throw usage(`unexpected argument: ${positionals[0]}`);
  const port = Number(flags.get('port') ?? '8080');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`invalid argument "${flags.get('port')}" for "--port": expected a port number`);
  const maxRunning = Number(flags.get('max-running') ?? '4');
  if (!Number.isInteger(maxRunning) || maxRunning < 1) throw usage(`invalid argument "${flags.get('max-running')}" for "--max-running": expected a positive integer`);
  const grace = parseJobDuration(flags.get('grace-period') ?? '60s');
  if (grace === undefined) throw usage(`invalid argument "${flags.get('grace-period')}" for "--grace-period": expected a duration like 60s or 1m30s`);
  const allow = flags.get('allow-command-steps');
  return {
    host: flags.get('host') ?? '127.0.0.1',
    port,
    ...storeLocation(flags),
    maxRunning,
    gracePeriodMs: grace,
    allowCommandSteps: allow === 'true' || allow === '',
  };
}
