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
import { flagSet, flagValue, flagValues, type ParsedArgs } from '../parse-command-line.js';
import { parseVarsFlag } from './args.js';

export const GRAPH_FORMATS = ['svg', 'dot', 'mermaid'] as const;
type Format = (typeof GRAPH_FORMATS)[number];

interface GraphArgs {
  readonly path: string;
  readonly format: Format;
  readonly select: readonly string[];
  readonly exclude: readonly string[];
  readonly schema?: string;
  readonly prod: boolean;
  readonly vars?: Record<string, unknown>;
}

const usage = (m: string) => new EngineError('usage', m);

/** The graph options from the parsed command line (the flags are declared in command-table.ts). */
export function graphArgs(a: ParsedArgs): GraphArgs {
  const format = flagValue(a, 'format') ?? 'svg';
  if (!(GRAPH_FORMATS as readonly string[]).includes(format)) throw usage(`--format must be svg, dot or mermaid, got ${JSON.stringify(format)}`);
  if (flagSet(a, 'prod') && flagSet(a, 'schema')) throw usage('cannot combine --prod and --schema');
  const vars = flagValue(a, 'vars');
  return {
    path: a.positionals[0] ?? '.',
    format: format as Format,
    select: flagValues(a, 'select'),
    exclude: flagValues(a, 'exclude'),
    schema: flagValue(a, 'schema'),
    prod: flagSet(a, 'prod'),
    vars: vars === undefined ? undefined : parseVarsFlag(vars),
  };
}

export async function graphCommand(a: ParsedArgs, io: Io): Promise<number> {
  const args = graphArgs(a);
  try {
    const { graph } = projectLineage(args, cliLogger({}, io.err));
    if (graph.nodes.length === 0) io.err(`warn: no models or seeds to draw under ${args.path}\n`);
    io.out(args.format === 'dot' ? lineageDot(graph) : args.format === 'mermaid' ? lineageMermaid(graph) : lineageSvg(layoutLineage(graph)));
    return 0;
  } catch (err) {
    return printFatal(err, io);
  }
}
