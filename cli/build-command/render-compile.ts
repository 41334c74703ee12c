/**
 * `service build compile` output: the JSON object
 * `{order, nodes, target, compiled}` with keys in the documented order, or the
 * text form (execution order, then one YAML-like block per node).
 */
import { resolvedMode, type CompiledNode } from '../../engine/compile/compile.js';

export { compileJson, compileNodeJson } from '../../engine/build-plan/compile-json.js';

/** Every line of `text` indented by `n` spaces (an empty line too). */
const indent = (text: string, n: number) => {
  const pad = ' '.repeat(n);
  return pad + text.replaceAll('\n', `\n${pad}`);
};

function statements(key: string, list: readonly string[]): string {
  let out = '';
  for (const st of list) out += `\n    - |\n${indent(st, 8)}`;
  return list.length === 0 ? '' : `\n  ${key}:${out}`;
}

function hooks(key: string, list: readonly unknown[]): string {
  let out = '';
  for (const h of list) out += `\n    - ${JSON.stringify(h)}`;
  return list.length === 0 ? '' : `\n  ${key}:${out}`;
}

/** One node's block (no trailing newline). Built by concatenation: 10,000 blocks are ≈3 MB of text. */
function block(n: CompiledNode, fullRefresh: boolean): string {
  const s = n.source;
  if (n.kind === 'seed') return `${n.name}:\n  type: seed\n  table: ${s.naming.fullName}\n  file: ${s.file}\n  format: ${n.source.format}`;
  if (n.kind === 'test') return `${n.name}:\n  type: test\n  on: ${s.naming.fullName}\n  file: ${s.file}\n  dependencies: [${n.dependencies.join(', ')}]\n  sql: |\n${indent(n.test.kind === 'sql' ? n.test.sql : '', 4)}`;
  const c = n.config;
  const mode = resolvedMode(n, fullRefresh);
  return (
    `${n.name}:\n  type: model\n  table: ${s.naming.fullName}\n  file: ${s.file}\n  mode: ${mode}` +
    (c.unique_key ? `\n  unique_key: [${c.unique_key.join(', ')}]` : '') +
    (mode === 'incremental' ? `\n  merge_strategy: ${c.merge_strategy}` : '') +
    (c.update_key ? `\n  update_key: ${c.update_key}` : '') +
    `\n  tags: [${c.tags.join(', ')}]\n  dependencies: [${n.dependencies.join(', ')}]` +
    hooks('start_hooks', c.hooks.start) +
    hooks('end_hooks', c.hooks.end) +
    statements('pre_statements', n.pre) +
    `\n  sql: |\n${indent(n.sql, 4)}` +
    statements('post_statements', n.post)
  );
}

export function compileText(nodes: readonly CompiledNode[], fullRefresh = false): string {
  if (nodes.length === 0) return '# No models selected.\n';
  let head = 'DAG Execution Order:\n';
  for (const n of nodes) head += `  ${n.name} (${n.kind === 'seed' ? 'seed' : resolvedMode(n, fullRefresh)})\n`;
  let body = '';
  for (const [i, n] of nodes.entries()) body += (i === 0 ? '' : '\n\n') + block(n, fullRefresh);
  return `${head}\n${body}\n`;
}
