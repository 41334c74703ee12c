/**
 * What a compiled dbt node reads. Ephemeral models have no relation: their
 * SQL goes into dependents as CTEs and their dependencies become the
 * dependents'. A source that is a table the project itself produces (a seed,
 * a model) makes its reader depend on that node.
 */
import { EngineError } from '../../errors.js';
import { injectCtes } from './live-render.js';
import { lower, type SeedEntry } from './dbt-resources.js';
import type { DbtScope } from './dbt-scope.js';
import type { ModelEntry } from './model-entry.js';

type WithDeps = Pick<ModelEntry, 'deps'>;

export class NodeDeps {
  /** Lower-cased `schema.name` → the node that produces that table. */
  readonly #byRelation = new Map<string, string>();

  constructor(private readonly scope: DbtScope, enabled: readonly ModelEntry[], private readonly seeds: readonly SeedEntry[]) {
    for (const m of enabled) if (!this.isEphemeral(lower(m.name))) this.#byRelation.set(lower(`${m.naming!.schema}.${m.naming!.name}`), m.name);
    for (const s of seeds) {
      const n = scope.seedNames.get(lower(s.name))!;
      this.#byRelation.set(lower(`${n.schema}.${n.name}`), s.name);
    }
  }

  isEphemeral(key: string): boolean {
    return this.scope.resources.byName.get(key)?.config.materialized === 'ephemeral';
  }

  #cteOrder(m: WithDeps, out: string[] = [], stack: string[] = []): string[] {
    const byName = this.scope.resources.byName;
    for (const d of m.deps ?? []) {
      if (!this.isEphemeral(d) || out.includes(d)) continue;
      if (stack.includes(d)) throw new EngineError('compile', `ephemeral models ref each other in a cycle: ${[...stack, d].join(' -> ')}`);
      this.#cteOrder(byName.get(d)!, out, [...stack, d]);
      out.push(d);
    }
    return out;
  }

  /** The CTE definitions of the ephemeral models a node reads, each after the ones it reads. */
  cteDefs(m: WithDeps): string {
    const byName = this.scope.resources.byName;
    return this.#cteOrder(m).map((k) => `__dbt__cte__${byName.get(k)!.name} as (\n${byName.get(k)!.sql}\n)`).join(',\n');
  }

  withCtes(m: WithDeps, sql: string): string {
    return injectCtes(this.cteDefs(m), sql);
  }

  /** The node names a render's ref and source keys make it wait for (`self` excluded), sorted. */
  nodeDeps(keys: Iterable<string>, self: string): string[] {
    const { byName } = this.scope.resources;
    const out = new Set<string>();
    const seenE = new Set<string>();
    const add = (k: string) => {
      if (k.startsWith('source:')) {
        const p = this.scope.partsOf(this.scope.sources.get(k.slice(7))!);
        const n = this.#byRelation.get(lower(`${p.schema}.${p.identifier}`));
        if (n && lower(n) !== self) out.add(n);
        return;
      }
      if (this.isEphemeral(k)) {
        if (seenE.has(k)) return;
        seenE.add(k);
        for (const d of byName.get(k)!.deps ?? []) add(d);
        return;
      }
      const n = byName.get(k)?.name ?? this.seeds.find((s) => lower(s.name) === k)?.name;
      if (n && lower(n) !== self) out.add(n);
    };
    for (const k of keys) add(k);
    return [...out].sort();
  }
}
