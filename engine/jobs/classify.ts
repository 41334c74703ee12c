/**
 * Job-file classification: by name and content only. YAML files
 * are pipeline, replication or monitor by the top-level keys of their (first)
 * document — `steps` before `streams` before `objects`; `.sql` files are
 * query files when their header declares a connection. Everything else is a
 * plain file. A `.yaml`/`.yml` file that does not parse cannot be classified
 * and is reported like an invalid job file.
 */
import type { JobKind } from './job-file-context.js';
import type { Problem } from './problem.js';
import { connectionDeclarations } from './query-file.js';
import { parseYaml, topLevelKeys, type YNode } from './yaml-tree.js';

export type Classification =
  | { readonly kind: JobKind }
  | { readonly kind: null }
  | { readonly kind: 'invalid-yaml'; readonly problems: readonly Problem[] };

/** Extensions compare case-insensitively: `Jobs.YAML` is a YAML file too. */
export function isYamlName(name: string): boolean {
  return /\.ya?ml$/i.test(name);
}

export function isSqlName(name: string): boolean {
  return /\.sql$/i.test(name);
}

/** The kind a YAML document's top level names, or null. */
export function yamlKind(root: YNode | undefined): 'pipeline' | 'replication' | 'monitor' | null {
  const keys = topLevelKeys(root);
  if (keys === undefined) return null;
  if (keys.has('steps')) return 'pipeline';
  if (keys.has('streams')) return 'replication';
  if (keys.has('objects')) return 'monitor';
  return null;
}

export function classifyJobFile(name: string, text: string): Classification {
  if (isYamlName(name)) {
    const parsed = parseYaml(text);
    if (parsed.syntaxProblems.length > 0) return { kind: 'invalid-yaml', problems: parsed.syntaxProblems };
    return { kind: yamlKind(parsed.root) };
  }
  if (isSqlName(name)) return { kind: connectionDeclarations(text).length > 0 ? 'query' : null };
  return { kind: null };
}
