/**
 * The CLI reference (docs/cli.md), generated from the help texts the
 * commands print themselves, so the page and `--help` cannot disagree:
 * `npm run docs:cli` rewrites it, and a test fails when it is stale.
 */
import { BENCH_DAG_HELP } from './bench.js';
import { GRAPH_HELP } from './build/graph-command.js';
import { buildHelp, commandHelp } from './build/help.js';
import { commandHelpFor, HELPED_COMMANDS } from './command-help.js';
import { INIT_HELP } from './init.js';
import { RUN_HELP } from './run-file.js';

const section = (title: string, help: string) => `## \`service ${title}\`\n\n\`\`\`\n${help.trimEnd()}\n\`\`\`\n`;

export function cliReference(): string {
  const parts = [
    '# CLI reference\n',
    'Generated from the commands\' own `--help` (`npm run docs:cli`); run any of them with `--help` for the same text. Write `npx service …`: on Linux a bare `service` is `/usr/sbin/service`.\n',
    section('init', INIT_HELP),
    section('build', buildHelp()),
    ...(['run', 'list', 'test', 'compile'] as const).map((c) => section(`build ${c}`, commandHelp(c))),
    section('build graph', GRAPH_HELP),
    section('run', RUN_HELP),
    ...HELPED_COMMANDS.map((c) => section(c, commandHelpFor(c.split(' ')[0]!, [...c.split(' ').slice(1), '--help'])!)),
    section('bench dag', BENCH_DAG_HELP),
  ];
  return parts.join('\n');
}
