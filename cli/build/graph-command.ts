/**
 * `service build graph [path] --format svg|dot|mermaid`: the project's
 * lineage (models, seeds and their dependencies) as a picture on stdout —
 * the same SVG the web console's Lineage page shows, or Graphviz DOT, or a
 * Mermaid flowchart. `--select`/`--exclude` keep part of the graph.
 */
import { EngineError } from '../../engine/errors.js';
import { layoutLineage } from '../../engine/lineage/layout-lineage.js';
import { projectLineage } from '../../engine/lineage/project-lineage.js';
import { lineageDot, lineageMermaid, lineageSvg } from '../../engine/lineage/render-lineage.js';
import { cliLogger } from '../cli-logger.js';
import { printFatal, type Io } from '../io.js';
import { parseVarsFlag } from './args.js';

export const GRAPH_FORMATS = ['svg', 'dot', 'mermaid'] as const;
type Format = (typeof GRAPH_FORMATS)[number];

interface GraphArgs {
  readonly path: string;
  readonly format: Format;
  readonly select: string[];
  readonly exclude: string[];
  readonly schema?: string;
  readonly prod: boolean;
  readonly vars?: Record<string, unknown>;
  readonly help: boolean;
}

const usage = (m: string) => new EngineError('usage', m);
const VALUE_FLAGS = new Map([['--format', 'format'], ['-s', 'select'], ['--select', 'select'], ['--exclude', 'exclude'], ['--schema', 'schema'], ['--vars', 'vars']]);

export const GRAPH_HELP = [
  'service build graph: draw the lineage of the models and seeds (no target needed)',
  '',
  'Usage:',
  '  service build graph [path] [flags]',
  '',
  'Flags:',
  '      --format <value>         svg (default), dot or mermaid',
  '  -s, --select <value>         keep these nodes (repeatable, comma-separated)',
  '      --exclude <value>        drop these nodes (repeatable, comma-separated)',
  '      --schema <value>         dev mode with this schema',
  '      --prod                   force prod naming',
  '      --vars <value>           template variables as a JSON object',
  '  -h, --help                   show this help',
  '',
].join('\n');

export function parseGraphArgs(argv: readonly string[]): GraphArgs {
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  let prod = false;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    if (flag === '--prod') prod = true;
    else if (flag === '--help' || flag === '-h') help = true;
    else {
      const key = VALUE_FLAGS.get(flag);
      if (!key) throw usage(`unknown flag: ${flag}`);
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw usage(`flag needs an argument: ${flag}`);
      values.set(key, [...(values.get(key) ?? []), value]);
    }
  }
  if (positionals.length > 1) throw usage(`accepts at most 1 arg(s), received ${positionals.length}`);
  const format = values.get('format')?.at(-1) ?? 'svg';
  if (!(GRAPH_FORMATS as readonly string[]).includes(format)) throw usage(`--format must be svg, dot or mermaid, got ${JSON.stringify(format)}`);
  if (prod && values.has('schema')) throw usage('cannot combine --prod and --schema');
  const vars = values.get('vars')?.at(-1);
  return {
    path: positionals[0] ?? '.',
    format: format as Format,
    select: values.get('select') ?? [],
    exclude: values.get('exclude') ?? [],
    schema: values.get('schema')?.at(-1),
    prod,
    vars: vars === undefined ? undefined : parseVarsFlag(vars),
    help,
  };
}

export function graphCommand(argv: readonly string[], io: Io): number {
  let args: GraphArgs;
  try {
    args = parseGraphArgs(argv);
  } catch (err) {
    return printFatal(err, io, undefined, 'graph');
  }
  if (args.help) {
    io.out(GRAPH_HELP);
    return 0;
  }
  try {
    const { graph } = projectLineage(args, cliLogger({}, io.err));
    if (graph.nodes.length === 0) io.err(`warn: no models or seeds to draw under ${args.path}\n`);
    io.out(args.format === 'dot' ? lineageDot(graph) : args.format === 'mermaid' ? lineageMermaid(graph) : lineageSvg(layoutLineage(graph)));
    return 0;
  } catch (err) {
    return printFatal(err, io);
  }
}
