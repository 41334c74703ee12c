/**
 * One model rendered at compile time: its template prepared (config blocks,
 * `@name`), rendered with the default incremental context, and its
 * dependencies — the rendered references plus the parents of its
 * relationships tests — named as the nodes spell themselves.
 */
import { EngineError } from '../errors.js';
import type { ModelSource } from '../project/load.js';
import { suggestions } from '../suggest.js';
import type { CompiledModel } from './compile.js';
import { DEFAULT_INCREMENTAL, prepareTemplate, renderModel, type RenderEnv } from './render-model.js';

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function compileModel(projectEnv: RenderEnv, m: ModelSource): CompiledModel {
  // A merged sub-project's model renders with its own vars.
  const env = m.vars ? { ...projectEnv, vars: m.vars } : projectEnv;
  const prepared = prepareTemplate(env, m);
  const r = renderModel(env, m, prepared, DEFAULT_INCREMENTAL);
  const depNames = new Set([...r.deps].map((k) => env.index.resolve(k)!.name));
  // relationships tests add an edge parent -> child.
  for (const [i, t] of m.tests.entries()) {
    if (t.kind !== 'relationships') continue;
    const parent = env.index.resolve(t.to);
    if (!parent) {
      const hint = suggestions(t.to, env.index.all.map((n) => ({ name: n.name, file: n.file })));
      throw new EngineError('compile', `model '${m.name}' test ${i + 1}: relationships.to: ref('${t.to}') not found.${hint}`);
    }
    if (parent.name.toLowerCase() !== m.name.toLowerCase()) depNames.add(parent.name);
  }
  return {
    kind: 'model',
    name: m.name,
    source: m,
    config: r.config,
    tests: m.tests,
    sql: r.sql,
    pre: r.pre,
    post: r.post,
    dependencies: [...depNames].sort(cmp),
    template: prepared.source,
    templatePrefix: prepared.prefix,
  };
}
