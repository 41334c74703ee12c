/**
 * The one command-line parser of `service`: a strict scan against the
 * command table (command-table.ts) finds the command, checks every token and
 * reads the options. Each usage error is exact and names the flag as typed:
 * `unknown flag: -q`, `flag --threads is not valid for 'service build
 * compile' (applies to: run, test)`, `flag needs an argument: -s`,
 * `flag --json does not take a value`, a missing or extra positional, an
 * unknown command with the closest name. Values are taken as written (a
 * value may start with `-` or be empty; `-ojson`, `-o=json`, `-o json`);
 * a switch never takes the next word; repeatable options keep every value,
 * the others the last; declared defaults fill in. Why this is ours and not
 * a package's: docs/architecture.md, "The design's packages".
 *
 * `-h`/`--help` anywhere (before `--`) asks for the help of the command or
 * group named so far, and wins over every other argument.
 */
import { EngineError } from '../engine/errors.js';
import { closestName } from '../engine/suggest.js';
import { COMMANDS, commandByName, commandsOf, groupByName, type CommandDef, type OptionDef } from './command-table.js';

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
  const args = readArguments(def, rest);
  checkPositionals(def, args.positionals);
  return { kind: 'command', args };
}

/** Every token checked against the command's options and read; then the defaults of the options not given. */
function readArguments(def: CommandDef, argv: readonly string[]): ParsedArgs {
  const byLong = new Map(def.options.map((o) => [o.long, o]));
  const byShort = new Map(def.options.filter((o) => o.short).map((o) => [o.short!, o]));
  const values = new Map<string, string[]>();
  const give = (o: OptionDef, value: string) => values.set(o.long, o.repeatable ? [...(values.get(o.long) ?? []), value] : [value]);
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
      give(opt, 'true');
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw new UsageError(`flag needs an argument: ${shown}`, def.name);
      i++;
    }
    give(opt, value);
  }
  for (const o of def.options) if (o.default !== undefined && !values.has(o.long)) values.set(o.long, [String(o.default)]);
  return { command: def.name, positionals, values };
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
