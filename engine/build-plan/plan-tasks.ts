/**
 * Turns selected compiled nodes into JSON-safe tasks: the
 * relation, resolved mode, rendered SQL, test plans with resolved parents,
 * and a render recipe whose `refs` hold every node the template can name.
 */
import type { CompiledModel, CompiledNode, CompiledProject, CompiledTest } from '../compile/compile.js';
import { resolvedMode } from '../compile/compile.js';
import type { IndexedNode } from '../compile/node-index.js';
import type { NodeName } from '../project/naming.js';
import type { Relation } from '../targets/target.js';
import type { ModelTask, NodeTask, PlannedTest, SeedTask, TestTask } from './node-task.js';

export const relationOf = (n: NodeName): Relation => (n.database ? { database: n.database, schema: n.schema, name: n.name } : { schema: n.schema, name: n.name });

const WORDS = /[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*"?[A-Za-z_][A-Za-z0-9_]*"?){0,2}/g;

/** Every node whose name or prod name appears as a word sequence in the template (a superset of its references). */
function templateRefs(cp: CompiledProject, m: CompiledModel): IndexedNode[] {
  const out = new Map<string, IndexedNode>();
  const add = (n: IndexedNode | undefined) => n && out.set(n.name.toLowerCase(), n);
  for (const match of m.template.matchAll(WORDS)) {
    const parts = match[0].split('.').map((p) => p.trim().replace(/"/g, ''));
    for (let i = 0; i < parts.length; i++) add(cp.env.index.resolve(parts.slice(i).join('.')));
    add(cp.env.index.resolve(parts[0]!));
  }
  for (const d of m.dependencies) add(cp.env.index.resolve(d));
  return [...out.values()];
}

function plannedTests(cp: CompiledProject, m: CompiledModel): PlannedTest[] {
  return m.tests.map((test) => {
    if (test.kind !== 'relationships') return { test };
    const parent = cp.env.index.resolve(test.to)!;
    return { test, parent: relationOf(parent.naming) };
  });
}

export function modelTask(cp: CompiledProject, m: CompiledModel, fullRefresh: boolean): ModelTask {
  const naming = m.source.naming;
  const mode = resolvedMode(m, fullRefresh);
  return {
    kind: 'model',
    name: m.name,
    table: naming.fullName,
    relation: relationOf(naming),
    mode,
    config: m.config,
    style: m.source.style,
    sql: m.sql,
    pre: m.pre,
    post: m.post,
    tests: plannedTests(cp, m),
    ...(m.dbt ? { dbt: m.dbt } : {}),
    ...(m.live ? { live: m.live } : {}),
    recipe: {
      model: { name: m.name, config: m.source.config, hasFrontMatter: m.source.hasFrontMatter, naming },
      template: m.template,
      prefix: m.templatePrefix,
      atRefs: [],
      // Only an incremental model re-renders at run time (engine/build-plan/incremental.ts).
      refs: mode === 'incremental' ? templateRefs(cp, m) : [],
      vars: m.source.vars ?? cp.env.vars,
      target: cp.env.target,
      stepEnv: cp.env.stepEnv,
    },
  };
}

export function seedTask(n: Extract<CompiledNode, { kind: 'seed' }>): SeedTask {
  const s = n.source;
  return { kind: 'seed', name: n.name, table: s.naming.fullName, relation: relationOf(s.naming), file: s.abs, format: s.format, ...(n.dbt ? { dbt: n.dbt } : {}) };
}

/** A test node (dbt projects): its one query, named after the test, run against the tested relation. */
export function testNodeTask(t: CompiledTest): TestTask {
  return { kind: 'test', name: t.name, table: t.name, relation: relationOf(t.source.naming), tests: [{ test: t.test }], on: t.source.naming.fullName, ...(t.live ? { live: t.live } : {}) };
}

export function testTask(cp: CompiledProject, m: CompiledModel): TestTask {
  return { kind: 'test', name: m.name, table: m.source.naming.fullName, relation: relationOf(m.source.naming), tests: plannedTests(cp, m) };
}

export function planTasks(cp: CompiledProject, selected: readonly CompiledNode[], verb: 'run' | 'test', fullRefresh: boolean): NodeTask[] {
  return selected.map((n) => {
    if (n.kind === 'seed') return seedTask(n);
    if (n.kind === 'test') return testNodeTask(n);
    return verb === 'test' ? testTask(cp, n) : modelTask(cp, n, fullRefresh);
  });
}
