/**
 * Help texts for `service build` and its commands, generated from the flag
 * table so the help can never list a flag the parser rejects.
 */
import { BUILD_FLAGS, type BuildCommand } from './args.js';

const SUMMARY: Record<BuildCommand, string> = {
  run: 'materialize the selected models, then run their data tests',
  list: 'list the selected models (no target needed)',
  test: 'run data tests only (no materialization)',
  compile: 'render SQL and the DAG; execute nothing',
};

export function buildHelp(): string {
  return [
    'Compile and run a folder of Jinja-templated SQL models.',
    '',
    'Usage:',
    '  service build <command> [path] [flags]',
    '',
    'Commands:',
    ...(Object.keys(SUMMARY) as BuildCommand[]).map((c) => `  ${c.padEnd(9)} ${SUMMARY[c]}`),
    `  ${'graph'.padEnd(9)} draw the lineage as SVG, Graphviz DOT or Mermaid`,
    '',
    "Run 'service build <command> --help' for the flags of a command.",
    '',
  ].join('\n');
}

export function commandHelp(command: BuildCommand): string {
  const rows = BUILD_FLAGS.filter((f) => f.commands.includes(command)).map((f) => {
    const name = `${f.short ? `-${f.short}, ` : '    '}--${f.long}${f.value ? ' <value>' : ''}`;
    return `  ${name.padEnd(28)} ${f.help}`;
  });
  return [`service build ${command}: ${SUMMARY[command]}`, '', 'Usage:', `  service build ${command} [path] [flags]`, '', 'Flags:', ...rows, ''].join('\n');
}
