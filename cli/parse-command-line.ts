/**
 * The one command-line parser of `service`. It works in two steps:
 *
 * 1. A strict scan against the command table finds the command and checks
 *    every token, so each usage error is exact and names the flag as typed:
 *    `unknown flag: -q`, `flag --threads is not valid for 'service build
 *    compile' (applies to: run, test)`, `flag needs an argument: -s`,
 *    `flag --json does not take a value`, a missing or extra positional. It
 *    writes the tokens in canonical form: `--long=value`, `--switch`, then
 *    `--` and the positionals.
 * 2. sade (with mri underneath) reads the canonical form: it resolves the
 *    command, applies the declared defaults and collects repeated options.
 *    The canonical form exists because mri alone is lenient where the CLI
 *    must not be — a value that starts with `-`, an empty value before a
 *    positional, `-ojson`, a switch followed by a word.
 *
 * `-h`/`--help` anywhere (before `--`) asks for the help of the command or
 * group named so far, and wins over every other argument.
 */
import { EngineError } from '../engine/errors.js';
import { closestName } from '../engine/suggest.js';
import { COMMANDS, commandByName, commandsOf, groupByName, type CommandDef, type OptionDef } from './command-table.js';
import { sadeProgram } from './sade-program.js';

/** A usage error (exit 2) and the help topic its hint names (`build list`, `jobs`, or '' for the program). */
export class UsageError extends EngineError {
  constructor(message: string, readonly topic: string) {
    super('usage', message);
  }
}

export interface ParsedArgs {
  readonly command: string;
  readonly positionals: readonly string[];
  /** Every value of every option given or defaulted, in order; a switch holds `'true'`. */
  readonly values: ReadonlyMap<string, readonly string[]>;
}

export type CommandLine =
  | { readonly kind: 'help'; readonly topic: string }
  | { readonly kind: 'version' }
  | { readonly kind: 'command'; readonly args: ParsedArgs };

/** The last value of an option (the default when not given). */
export const flagValue = (a: ParsedArgs, long: string): string | undefined => a.values.get(long)?.at(-1);
/** Every value of a repeatable option. */
export const flagValues = (a: ParsedArgs, long: string): readonly string[] => a.values.get(long) ?? [];
/** Whether a switch was given. */
export const flagSet = (a: ParsedArgs, long: string): boolean => a.values.has(long);

/** `; did you mean "graph"?` when one name is close to the mistyped word, else ''. */
const didYouMean = (word: string, names: readonly string[]) => {
  const near = closestName(word, names);
  return near === undefined ? '' : `; did you mean "${near}"?`;
};

const orList = (items: readonly string[]) => (items.length <= 2 ? items.join(' or ') : `${items.slice(0, -1).join(', ')}, or ${items.at(-1)}`);

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const beforeDashes = argv.indexOf('--') >= 0 ? argv.slice(0, argv.indexOf('--')) : argv;
  const wantsHelp = beforeDashes.includes('--help') || beforeDashes.includes('-h');
  const [first, second] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') return { kind: 'help', topic: '' };
  if (first === '--version' || first === '-v') return { kind: 'version' };
  let def: CommandDef | undefined;
  let rest: readonly string[];
  if (groupByName.has(first)) {
    if (second === undefined || second === 'help' || second === '--help' || second === '-h') return { kind: 'help', topic: first };
    def = commandByName.get(`${first} ${second}`);
    if (def === undefined) {
      if (wantsHelp && second.startsWith('-')) return { kind: 'help', topic: first };
      const names = commandsOf(first).filter((c) => c.unlisted !== true).map((c) => c.name.slice(first.length + 1));
      const others = commandsOf(first).filter((c) => c.unlisted === true).map((c) => c.name.slice(first.length + 1));
      throw new UsageError(`unknown ${first} command "${second}", expected ${orList(names)}${others.length > 0 ? ` (or ${orList(others)})` : ''}${didYouMean(second, [...names, ...others])}`, first);
    }
    rest = argv.slice(2);
  } else {
    def = commandByName.get(first);
    if (def === undefined) {
      const names = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))];
      throw new UsageError(`unknown command "${first}", expected ${orList(names)}${didYouMean(first, names)}`, '');
    }
    rest = argv.slice(1);
  }
  if (wantsHelp) return { kind: 'help', topic: def.name };
  const { canonical, positionals } = canonicalize(def, rest);
  checkPositionals(def, positionals);
  return { kind: 'command', args: readWithSade(def, canonical, positionals) };
}

/** Step 1: every token checked against the command's options and rewritten in canonical form. */
function canonicalize(def: CommandDef, argv: readonly string[]): { canonical: string[]; positionals: string[] } {
  const byLong = new Map(def.options.map((o) => [o.long, o]));
  const byShort = new Map(def.options.filter((o) => o.short).map((o) => [o.short!, o]));
  const canonical: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    let opt: OptionDef | undefined;
    let shown: string;
    let inline: string | undefined; // a value written in the same token
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      shown = eq >= 0 ? arg.slice(0, eq) : arg;
      inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
      opt = byLong.get(shown.slice(2));
    } else {
      // `-s value`, `-svalue`, `-s=value`; a switch's letter stands alone.
      opt = byShort.get(arg[1]!);
      shown = arg.length === 2 || opt?.value !== undefined ? arg.slice(0, 2) : arg;
      if (arg.length > 2 && opt?.value !== undefined) inline = arg.slice(arg[2] === '=' ? 3 : 2);
      else if (arg.length > 2) opt = undefined;
    }
    if (opt === undefined) throw unknownFlag(def, shown, arg.startsWith('--') ? shown.slice(2) : arg.slice(1));
    if (opt.value === undefined) {
      if (inline !== undefined) throw new UsageError(`flag ${shown} does not take a value`, def.name);
      canonical.push(`--${opt.long}`);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw new UsageError(`flag needs an argument: ${shown}`, def.name);
      i++;
    }
    canonical.push(`--${opt.long}=${value}`);
  }
  return { canonical, positionals };
}

/** `unknown flag: X`, or, when a sibling command of the group takes it, which commands do. */
function unknownFlag(def: CommandDef, shown: string, name: string): UsageError {
  const space = def.name.indexOf(' ');
  if (space > 0) {
    const group = def.name.slice(0, space);
    const takers = commandsOf(group).filter((c) => c.options.some((o) => (shown.startsWith('--') ? o.long === name : o.short === name)));
    if (takers.length > 0) {
      return new UsageError(`flag ${shown} is not valid for 'service ${def.name}' (applies to: ${takers.map((c) => c.name.slice(space + 1)).join(', ')})`, def.name);
    }
  }
  return new UsageError(`unknown flag: ${shown}`, def.name);
}

function checkPositionals(def: CommandDef, positionals: readonly string[]): void {
  const declared = (def.args ?? '').split(/\s+/).filter(Boolean);
  const required = declared.filter((a) => a.startsWith('<'));
  if (positionals.length < required.length) {
    throw new UsageError(`service ${def.name} needs ${required[positionals.length]!.slice(1, -1)}`, def.name);
  }
  if (positionals.length > declared.length) {
    throw new UsageError(def.tooManyArgs ? def.tooManyArgs(positionals.length) : `unexpected argument: ${positionals[declared.length]}`, def.name);
  }
}

/**
 * Step 2: sade resolves the command and mri reads the canonical tokens.
 * Options that start with `no-` reach mri as the negation of the rest of the
 * name (mri's convention), so that name is declared to it and read back.
 */
function readWithSade(def: CommandDef, canonical: readonly string[], positionals: readonly string[]): ParsedArgs {
  const negated = def.options.filter((o) => o.value === undefined && o.long.startsWith('no-'));
  const parsed = sadeProgram().parse(['node', 'service', ...def.name.split(' '), ...canonical, '--', ...positionals], {
    lazy: true,
    string: def.options.filter((o) => o.value !== undefined).map((o) => o.long),
    boolean: def.options.filter((o) => o.value === undefined && !o.long.startsWith('no-')).map((o) => o.long),
    alias: Object.fromEntries(negated.map((o) => [o.long.slice(3), []])),
    unknown: (flag: string) => {
      throw new UsageError(`unknown flag: ${flag}`, def.name);
    },
  });
  if (parsed.name !== def.name) throw new EngineError('internal', `sade resolved "${parsed.name}" for "${def.name}"`);
  const opts = parsed.args.at(-1) as unknown as Record<string, unknown> & { _: string[] };
  const values = new Map<string, string[]>();
  for (const o of def.options) {
    const raw = o.long.startsWith('no-') && o.value === undefined ? (opts[o.long.slice(3)] === false ? true : undefined) : opts[o.long];
    if (raw === undefined || raw === false) continue;
    const list = (Array.isArray(raw) ? raw : [raw]).map((v) => String(v));
    values.set(o.long, o.repeatable ? list : [list.at(-1)!]);
  }
  const read = [...(parsed.args.slice(0, -1) as unknown as (string | undefined)[]).filter((p): p is string => p !== undefined), ...opts._.map(String)];
  if (read.length !== positionals.length) throw new EngineError('internal', `sade read ${read.length} positional(s) for "${def.name}", expected ${positionals.length}`);
  return { command: def.name, positionals, values };
}
