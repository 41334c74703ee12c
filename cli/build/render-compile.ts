/**
 * `service build compile` output: the JSON object
 * `{order, nodes, target, compiled}` with keys in the spec's order, or the
 * text form (execution order, then one YAML-like block per node).
 */
import { resolvedMode, type CompiledNode } from '../../engine/compile/compile.js';

export { compileJson, compileNodeJson } from '../../engine/build-plan/compile-json.js';

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

function statements(key: string, list: readonly string[]): string[] {
  if (list.length === 0) return [];
  return [`  ${key}:`, ...list.flatMap((s) => ['    - |', indent(s, 8)])];
}

function hooks(key: string, list: readonly unknown[]): string[] {
  if (list.length === 0) return [];
  return [`  ${key}:`, ...list.map((h) => `    - ${JSON.stringify(h)}`)];
}

export function compileText(nodes: readonly CompiledNode[], fullRefresh = false): string {
  if (nodes.length === 0) return '# No models selected.\n';
  const kind = (n: CompiledNode) => (n.kind === 'seed' ? 'seed' : resolvedMode(n, fullRefresh));
  const head = ['DAG Execution Order:', ...nodes.map((n) => `  ${n.name} (${kind(n)})`), ''];
  const blocks = nodes.map((n) => {
    const s = n.source;
    if (n.kind === 'seed') return [`${n.name}:`, '  type: seed', `  table: ${s.naming.fullName}`, `  file: ${s.file}`, `  format: ${n.source.format}`].join('\n');
    if (n.kind === 'test') return [`${n.name}:`, '  type: test', `  on: ${s.naming.fullName}`, `  file: ${s.file}`, `  dependencies: [${n.dependencies.join(', ')}]`, '  sql: |', indent(n.test.kind === 'sql' ? n.test.sql : '', 4)].join('\n');
    const c = n.config;
    const mode = resolvedMode(n, fullRefresh);
    return [
      `${n.name}:`,
      '  type: model',
      `  table: ${s.naming.fullName}`,
      `  file: ${s.file}`,
      `  mode: ${mode}`,
      ...(c.unique_key ? [`  unique_key: [${c.unique_key.join(', ')}]`] : []),
      ...(mode === 'incremental' ? [`  merge_strategy: ${c.merge_strategy}`] : []),
      ...(c.update_key ? [`  update_key: ${c.update_key}`] : []),
      `  tags: [${c.tags.join(', ')}]`,
      `  dependencies: [${n.dependencies.join(', ')}]`,
      ...hooks('start_hooks', c.hooks.start),
      ...hooks('end_hooks', c.hooks.end),
      ...statements('pre_statements', n.pre),
      '  sql: |',
      indent(n.sql, 4),
      ...statements('post_statements', n.post),
    ].join('\n');
  });
  return [...head, blocks.join('\n\n'), ''].join('\n');
}
