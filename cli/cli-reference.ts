/**
 * The CLI reference (docs/cli.md), generated from the same command table
 * as every `--help`, so the page and the help cannot disagree:
 * `npm run docs:cli` rewrites it, and a test fails when it is stale.
 */
import { helpText, helpTopics } from './command-help.js';
import { INVOKING } from './invocation-text.js';

const section = (topic: string) => `## \`service${topic ? ` ${topic}` : ''}\`\n\n\`\`\`\n${helpText(topic).trimEnd()}\n\`\`\`\n`;

export function cliReference(): string {
  return [
    '# CLI reference\n',
    "Generated from the commands' own `--help` (`npm run docs:cli`); run any of them with `--help` for the same text.\n",
    `${INVOKING}\n`,
    ...helpTopics().map(section),
  ].join('\n');
}
