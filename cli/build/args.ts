/**
 * Strict argument parsing for `service build <command>` (build.md §14.2–14.3).
 * Usage errors are detected from the arguments alone, before any file is
 * read, and carry code 'usage' (exit 2). The flag table is the one place
 * that says which flag applies to which command.
 */
import { parse as parseYaml } from 'yaml';
import { EngineError } from '../../engine/errors.js';
import { parseRangeFlag, type RangeSpec } from '../../engine/range-flag.js';

export type BuildCommand = 'run' | 'list' | 'test' | 'compile';
export const BUILD_COMMANDS: readonly BuildCommand[] = ['run', 'list', 'test', 'compile'];

interface FlagDef {
  readonly long: string;
  readonly short?: string;
  readonly value: boolean;
  readonly commands: readonly BuildCommand[];
  readonly help: string;
}

const ALL = BUILD_COMMANDS;
export const BUILD_FLAGS: readonly FlagDef[] = [
  { long: 'target', short: 't', value: true, commands: ALL, help: 'target connection name' },
  { long: 'select', short: 's', value: true, commands: ALL, help: 'select nodes (repeatable, comma-separated)' },
  { long: 'exclude', value: true, commands: ALL, help: 'exclude nodes (repeatable, comma-separated)' },
  { long: 'schema', value: true, commands: ALL, help: 'dev mode with this schema' },
  { long: 'prod', value: false, commands: ALL, help: 'force prod naming' },
  { long: 'vars', value: true, commands: ALL, help: 'template variables as a JSON object' },
  { long: 'recursive', short: 'R', value: false, commands: ALL, help: 'build child projects (sub-directories with their own config)' },
  { long: 'json', value: false, commands: ALL, help: 'machine-readable output on stdout' },
  { long: 'debug', short: 'd', value: false, commands: ALL, help: 'debug logging (rendered SQL, chunks, probes)' },
  { long: 'trace', value: false, commands: ALL, help: 'trace logging' },
  { long: 'full-refresh', short: 'f', value: false, commands: ['run'], help: 'rebuild every selected model from scratch' },
  { long: 'range', value: true, commands: ['run'], help: "backfill range 'start,end[,step]'" },
  { long: 'no-seeds', value: false, commands: ['run'], help: 'skip loading seeds' },
  { long: 'threads', value: true, commands: ['run', 'test'], help: 'parallel node executions (default 4)' },
  { long: 'fail-fast', short: 'x', value: false, commands: ['run', 'test'], help: 'stop starting nodes after the first failure' },
  { long: 'profiles-dir', value: true, commands: ALL, help: 'dbt projects: the directory holding profiles.yml' },
  { long: 'freshness', value: false, commands: ['test'], help: "dbt projects: check the sources' freshness instead of the data tests" },
  { long: 'help', short: 'h', value: false, commands: ALL, help: 'show this help' },
];

const byLong = new Map(BUILD_FLAGS.map((f) => [f.long, f]));
const byShort = new Map(BUILD_FLAGS.filter((f) => f.short).map((f) => [f.short!, f]));

export interface BuildArgs {
  readonly command: BuildCommand | undefined; // undefined: `service build` alone
  readonly help: boolean;
  readonly path: string;
  readonly target?: string;
  readonly select: readonly string[];
  readonly exclude: readonly string[];
  readonly schema?: string;
  readonly prod: boolean;
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly recursive: boolean;
  readonly json: boolean;
  readonly debug: boolean;
  readonly trace: boolean;
  readonly fullRefresh: boolean;
  readonly range?: RangeSpec;
  readonly noSeeds: boolean;
  readonly threads: number;
  readonly failFast: boolean;
  readonly profilesDir?: string;
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

/** `argv` after `build`. */
export function parseBuildArgs(argv: readonly string[]): BuildArgs {
  const first = argv[0];
  if (first === undefined || first === 'help' || (first.startsWith('-') && (first === '-h' || first === '--help'))) {
    return { ...EMPTY, command: undefined, help: true };
  }
  if (first.startsWith('-')) throw usage(`unknown flag: ${first}`);
  if (!(BUILD_COMMANDS as readonly string[]).includes(first)) throw usage(`unknown build command "${first}", expected run, list, test, or compile`);
  const command = first as BuildCommand;
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const shown = eq >= 0 ? arg.slice(0, eq) : arg;
    const def = arg.startsWith('--') ? byLong.get(shown.slice(2)) : byShort.get(arg.slice(1));
    if (!def) throw usage(`unknown flag: ${shown}`);
    if (!def.commands.includes(command)) {
      throw usage(`flag ${shown} is not valid for 'service build ${command}' (applies to: ${def.commands.join(', ')})`);
    }
    let value = 'true';
    if (def.value) {
      if (eq >= 0) value = arg.slice(eq + 1);
      else {
        const next = argv[i + 1];
        if (next === undefined) throw usage(`flag needs an argument: ${shown}`);
        value = next;
        i++;
      }
    } else if (eq >= 0) {
      throw usage(`flag ${shown} does not take a value`);
    }
    values.set(def.long, [...(values.get(def.long) ?? []), value]);
  }
  if (positionals.length > 1) throw usage(`accepts at most 1 arg(s), received ${positionals.length}`);
  const one = (k: string) => values.get(k)?.at(-1);
  const has = (k: string) => values.has(k);
  if (has('prod') && has('schema')) throw usage('cannot combine --prod and --schema');
  let threads = 4;
  if (has('threads')) {
    const t = one('threads')!;
    if (!/^-?\d+$/.test(t.trim())) throw usage(`invalid argument "${t}" for "--threads": expected an integer`);
    threads = Number(t);
    if (threads <= 0) threads = 4;
  }
  return {
    command,
    help: has('help'),
    path: positionals[0] ?? '.',
    target: one('target'),
    select: values.get('select') ?? [],
    exclude: values.get('exclude') ?? [],
    schema: one('schema'),
    prod: has('prod'),
    vars: has('vars') ? parseVarsFlag(one('vars')!) : undefined,
    recursive: has('recursive'),
    json: has('json'),
    debug: has('debug'),
    trace: has('trace'),
    fullRefresh: has('full-refresh'),
    range: has('range') ? parseRangeFlag(one('range')!) : undefined,
    noSeeds: has('no-seeds'),
    threads,
    failFast: has('fail-fast'),
    ...(has('profiles-dir') ? { profilesDir: one('profiles-dir')! } : {}),
    ...(has('freshness') ? { freshness: true } : {}),
  };
}

const EMPTY: BuildArgs = {
  command: undefined,
  help: false,
  path: '.',
  select: [],
  exclude: [],
  prod: false,
  recursive: false,
  json: false,
  debug: false,
  trace: false,
  fullRefresh: false,
  noSeeds: false,
  threads: 4,
  failFast: false,
};
