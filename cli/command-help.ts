/**
 * Every `--help` text of the program, rendered from the command table in
 * one layout: usage, summary, details, options with their defaults,
 * examples. Help goes to stdout with exit 0.
 */
import { INVOKING } from './invocation-text.js';
import { COMMANDS, GROUPS, commandByName, commandsOf, groupByName, type CommandDef, type OptionDef } from './command-table.js';

const optionName = (o: OptionDef) => `${o.short ? `-${o.short}, ` : '    '}--${o.long}${o.value ? ` ${o.value}` : ''}`;

function table(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...rows.map(([a]) => a.length)) + 2;
  return rows.map(([a, b]) => `  ${a.padEnd(width)}${b}`.trimEnd());
}

function commandHelp(c: CommandDef): string {
  const lines = [`Usage: service ${c.name}${c.args ? ` ${c.args}` : ''}${c.options.some((o) => o.long !== 'help') ? ' [options]' : ''}`, '', c.summary];
  if (c.details) lines.push('', c.details);
  lines.push('', 'Options:', ...table(c.options.map((o) => [optionName(o), `${o.help}${o.default !== undefined ? ` (default ${o.default})` : ''}`])));
  lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`));
  return lines.join('\n') + '\n';
}

function groupHelp(group: string): string {
  const g = groupByName.get(group)!;
  const commands = commandsOf(group);
  return [
    `Usage: service ${group} <command> [options]`,
    '',
    g.summary,
    ...(g.details ? ['', g.details] : []),
    '',
    'Commands:',
    ...table(commands.map((c) => [c.name.slice(group.length + 1) + (c.args ? ` ${c.args}` : ''), c.summary])),
    '',
    `Run 'service ${group} <command> --help' for its options and examples.`,
    '',
  ].join('\n');
}

function programHelp(): string {
  const rows: [string, string][] = [];
  const seen = new Set<string>();
  for (const c of COMMANDS) {
    const space = c.name.indexOf(' ');
    if (space < 0) rows.push([c.name + (c.args ? ` ${c.args}` : ''), c.summary]);
    else {
      const group = c.name.slice(0, space);
      if (seen.has(group)) continue;
      seen.add(group);
      rows.push([`${group} <command>`, `${groupByName.get(group)!.summary.replace(/\.$/, '')} (${commandsOf(group).map((x) => x.name.slice(space + 1)).join(', ')})`]);
    }
  }
  return [
    'Usage: service <command> [options]',
    '',
    'A data orchestrator: build SQL models (service build), run job files (service run), or run the daemon (service serve) and drive it over HTTP.',
    '',
    'Commands:',
    ...table(rows),
    '',
    'Options:',
    ...table([['-v, --version', 'print the version'], ['-h, --help', 'show this help']]),
    '',
    "Run 'service <command> --help' for a command's options and examples.",
    '',
    INVOKING,
    '',
  ].join('\n');
}

/** The help of the program (''), a group (`jobs`) or a command (`jobs list`). */
export function helpText(topic: string): string {
  if (topic === '') return programHelp();
  const c = commandByName.get(topic);
  if (c) return commandHelp(c);
  if (groupByName.has(topic)) return groupHelp(topic);
  throw new Error(`no help for "${topic}"`);
}

/** Every help topic, in the order of the CLI reference. */
export function helpTopics(): string[] {
  const topics = [''];
  for (const c of COMMANDS) {
    const group = c.name.split(' ')[0]!;
    if (c.name.includes(' ') && !topics.includes(group)) topics.push(group);
    topics.push(c.name);
  }
  return topics.filter((t) => GROUPS.some((g) => g.name === t) || commandByName.has(t) || t === '');
}
