/**
 * The JSON form of compiled nodes: `compile --json` prints
 * `{order, nodes, target, compiled}`; a pipeline build step with
 * `command: compile` publishes the same nodes.
 */
import { resolvedMode, type CompiledNode } from '../compile/compile.js';

export function compileNodeJson(n: CompiledNode, fullRefresh = false): Record<string, unknown> {
  const s = n.source;
  if (n.kind === 'seed') {
    return { name: n.name, type: 'seed', table: s.naming.fullName, file: s.file, format: n.source.format, mode: 'full-refresh', dependencies: [], tags: [], tests: [], sql: '' };
  }
  if (n.kind === 'test') {
    return { name: n.name, type: 'test', table: s.naming.fullName, file: s.file, mode: 'test', dependencies: n.dependencies, tags: n.source.tags, tests: [], sql: n.test.kind === 'sql' ? n.test.sql : '' };
  }
  const c = n.config;
  const mode = resolvedMode(n, fullRefresh);
  return {
    name: n.name,
    type: 'model',
    table: s.naming.fullName,
    file: s.file,
    mode,
    ...(c.unique_key ? { unique_key: c.unique_key } : {}),
    ...(c.update_key ? { update_key: c.update_key } : {}),
    ...(mode === 'incremental' ? { merge_strategy: c.merge_strategy } : {}),
    tags: c.tags,
    dependencies: n.dependencies,
    tests: c.tests,
    ...(n.pre.length > 0 ? { pre_statements: n.pre } : {}),
    sql: n.sql,
    ...(n.post.length > 0 ? { post_statements: n.post } : {}),
  };
}

export function compileJson(nodes: readonly CompiledNode[], target: string, fullRefresh = false): Record<string, unknown> {
  return { order: nodes.map((n) => n.name), nodes: nodes.map((n) => compileNodeJson(n, fullRefresh)), target, compiled: true };
}
