/**
 * The Markdown record of a full run, bench/results.md, rendered from
 * bench/results.json: the rows with a target (the table docs/performance.md
 * carries), the line naming the machine, the load and the page-fault cost,
 * then the rows kept for context. `npm run bench` writes it; this module run
 * directly rewrites it from a results.json:
 *   node --import tsx bench/lib/results-md.ts [results.json] [results.md]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine, type MachineInfo } from './machine.js';
import { markdownTable, verdict, type Row } from './report.js';

export interface Results {
  readonly generatedAt: string;
  readonly command: string;
  readonly durationSeconds: number;
  readonly machine: MachineInfo & { readonly loadAverageAtEnd: number; readonly postgres: string; readonly minorPageFaultUs?: number };
  readonly rows: readonly Row[];
}

/** The line under the table: what ratio means, the command, the machine, its load and its page-fault cost. */
export function footer(r: Results): string {
  const m = r.machine;
  const fault = m.minorPageFaultUs === undefined ? '' : `; a minor page fault costs ${m.minorPageFaultUs.toFixed(1)} µs here`;
  return (
    `Ratio = ours / same-run baseline (1.00× = as fast as the baseline). Repeated figures are min · median; ` +
    `load = the 1-minute load average when the row's suite started → ended. \`${r.command}\`, ${r.durationSeconds.toFixed(0)} s, ` +
    `${r.generatedAt.slice(0, 10)}, on ${describeMachine(m, m.postgres)}; load average ${m.loadAverageAtStart.toFixed(1)} at start, ` +
    `${m.loadAverageAtEnd.toFixed(1)} at end${fault}.`
  );
}

/** The verdict count, e.g. `4 PASS, 12 MISS`. */
export function tally(rows: readonly Row[]): string {
  const judged = rows.filter((r) => r.target);
  const pass = judged.filter((r) => r.target!.met === true).length;
  const miss = judged.filter((r) => r.target!.met === false).length;
  const other = judged.length - pass - miss;
  return `${pass} PASS, ${miss} MISS${other > 0 ? `, ${other} not evaluated (--quick)` : ''}`;
}

export function resultsMarkdown(r: Results): string {
  const targeted = r.rows.filter((x) => x.target);
  const context = r.rows.filter((x) => !x.target);
  const misses = targeted.filter((x) => x.target!.met === false).map((x) => `- ${verdict(x.target)} — ${x.label} (${x.target!.text})`);
  return [
    `Targets: ${tally(r.rows)}.`,
    '',
    markdownTable(targeted, false),
    '',
    footer(r),
    ...(misses.length > 0 ? ['', ...misses] : []),
    '',
    'Rows kept for context (no target):',
    '',
    markdownTable(context, false),
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const from = process.argv[2] ?? fileURLToPath(new URL('../results.json', import.meta.url));
  const to = process.argv[3] ?? fileURLToPath(new URL('../results.md', import.meta.url));
  const md = resultsMarkdown(JSON.parse(readFileSync(from, 'utf8')) as Results);
  writeFileSync(to, md);
  process.stdout.write(md);
}
