/**
 * `adapter.dispatch(name, macro_namespace)` as dbt resolves it: the
 * namespace's `search_order` from the project's `dispatch:` config, else the
 * project itself then the namespace; in each, `<adapter>__name` before
 * `default__name` (DuckDB then falls back to `postgres__name`, the dialect it
 * shares most with).
 */
import { EngineError } from '../../errors.js';
import type { MacroLookup } from './dbt-render-types.js';

export function dispatchMacro(scopes: MacroLookup, adapterType: string, name: string, ns: string | undefined, file: string): (...a: unknown[]) => unknown {
  if (name.includes('.')) {
    const [pkg, macro] = name.split('.', 2);
    throw new EngineError('compile', `${file}: adapter.dispatch('${name}'): dispatch takes the macro name and the namespace apart: adapter.dispatch('${macro}', '${pkg}')`);
  }
  const macros = scopes.macros;
  const configured = ns === undefined ? undefined : macros.dispatch.get(ns);
  const known = ns !== undefined && (ns === macros.projectName || macros.namespaces.has(ns));
  const order: (string | undefined)[] = configured && configured.length > 0 ? [...configured] : known ? [macros.projectName, ns] : [undefined];
  const prefixes = [adapterType, 'default', ...(adapterType === 'duckdb' ? ['postgres'] : [])];
  const tried: string[] = [];
  for (const pkg of order) {
    for (const p of prefixes) {
      const candidate = `${p}__${name}`;
      tried.push(pkg === undefined ? candidate : `${pkg}.${candidate}`);
      const m = pkg === undefined ? scopes.findAnywhere(candidate) : scopes.find(pkg, candidate);
      if (m !== undefined) return m;
    }
  }
  throw new EngineError('compile', `${file}: adapter.dispatch('${name}'${ns !== undefined ? `, '${ns}'` : ''}): no macro found; searched ${tried.join(', ')}`);
}
