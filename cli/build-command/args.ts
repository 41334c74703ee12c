/**
 * `service build <command>`'s options as the build stages want them. The
 * command line itself is read by parse-command-line.ts against the flag
 * table in command-table.ts; what is left here are the checks on values,
 * still from the arguments alone, before any file is read (usage errors,
 * exit 2).
 */
import type { BuildRequest } from '../../engine/build-plan/prepare-build.js';
import { parseYaml } from '../../engine/yaml-lib.js';
import { EngineError } from '../../engine/errors.js';
import { parseRangeFlag, type RangeSpec } from '../../engine/range-flag.js';
import { flagSet, flagValue, flagValues, type ParsedArgs } from '../parse-command-line.js';

export type BuildCommand = 'run' | 'list' | 'test' | 'compile';
export const BUILD_COMMANDS: readonly BuildCommand[] = ['run', 'list', 'test', 'compile'];

/** The flags the build request (engine/build-plan/prepare-build.ts) takes as they are, plus the command line's own. */
export interface BuildArgs extends Pick<BuildRequest, 'path' | 'target' | 'select' | 'exclude' | 'schema' | 'vars' | 'profilesDir'> {
  readonly command: BuildCommand;
  readonly prod: boolean;
  readonly recursive: boolean;
  readonly json: boolean;
  readonly debug: boolean;
  readonly trace: boolean;
  readonly fullRefresh: boolean;
  readonly range?: RangeSpec;
  readonly noSeeds: boolean;
  readonly threads: number;
  /** Warnings about the command line, logged once the build's logger exists. */
  readonly notes?: readonly string[];
  readonly failFast: boolean;
  readonly freshness?: boolean;
}

const usage = (msg: string) => new EngineError('usage', msg);

export function parseVarsFlag(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = parseYaml(text);
  } catch {
    throw usage('could not parse --vars: expected a JSON object');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw usage('could not parse --vars: expected a JSON object');
  return v as Record<string, unknown>;
}

/** The options of `service build <command>` from its parsed command line. */
export function buildArgs(command: BuildCommand, a: ParsedArgs): BuildArgs {
  if (flagSet(a, 'prod') && flagSet(a, 'schema')) throw usage('cannot combine --prod and --schema');
  let threads = 4;
  const notes: string[] = [];
  const t = flagValue(a, 'threads');
  if (t !== undefined) {
    if (!/^-?\d+$/.test(t.trim())) throw usage(`invalid argument "${t}" for "--threads": expected an integer`);
    threads = Number(t);
    // The build contract (docs/build-projects.md) reads a count below 1 as the default 4; it is said, not silent.
    if (threads <= 0) {
      notes.push(`--threads ${t.trim()} is below 1: using the default 4`);
      threads = 4;
    }
  }
  const vars = flagValue(a, 'vars');
  const range = flagValue(a, 'range');
  return {
    command,
    path: a.positionals[0] ?? '.',
    target: flagValue(a, 'target'),
    select: flagValues(a, 'select'),
    exclude: flagValues(a, 'exclude'),
    schema: flagValue(a, 'schema'),
    prod: flagSet(a, 'prod'),
    vars: vars !== undefined ? parseVarsFlag(vars) : undefined,
    recursive: flagSet(a, 'recursive'),
    json: flagSet(a, 'json'),
    debug: flagSet(a, 'debug'),
    trace: flagSet(a, 'trace'),
    fullRefresh: flagSet(a, 'full-refresh'),
    range: range !== undefined ? parseRangeFlag(range) : undefined,
    noSeeds: flagSet(a, 'no-seeds'),
    threads,
    notes,
    failFast: flagSet(a, 'fail-fast'),
    ...(flagValue(a, 'profiles-dir') !== undefined ? { profilesDir: flagValue(a, 'profiles-dir')! } : {}),
    ...(flagSet(a, 'freshness') ? { freshness: true } : {}),
  };
}
