/**
 * Macro namespaces as dbt resolves them. The project's macros are defined in
 * each template's own context (the shared prefix); every package — and `dbt`,
 * our built-in macros — is a scope of its own, rendered on first use in a
 * render into a context that inherits the template's, so a package's macros
 * see their siblings first and two packages may define the same name
 * (`default__date_spine` is in dbt, dbt_utils and dbt_date).
 * `dbt_utils.star(...)` and `adapter.dispatch('star', 'dbt_utils')` look
 * a macro up here.
 */
import { EngineError } from '../../errors.js';
import type { TemplateEngine } from '../../template/template-engine.js';
import { BUILTIN_NS, type MacroLookup, type MacroSet, type RenderState } from './dbt-render-types.js';

type Lookup = { lookup(name: string): unknown };
type Fn = (...args: unknown[]) => unknown;

const SCOPE_CAPTURE = '{%- do __dbt_scope_capture() -%}';

/**
 * A package's macros, defined once per project (per thread) and shared by
 * every render: defining them is running the package's whole prefix —
 * hundreds of macro objects for `dbt` and `dbt_utils` — which per render
 * was a third of a dbt_utils project's compile, most of it garbage
 * collection. The scope's context reads its own macros first, then the
 * project's macros and the context of the render calling it (`current`,
 * set by each call through a namespace and restored after it), so a
 * package macro still sees the calling model's `this`, `config`, `ref`.
 */
interface SharedScope {
  readonly lookup: Lookup;
  current: MacroScopes;
}
const shared = new WeakMap<MacroSet, Map<string, SharedScope>>();

export class MacroScopes implements MacroLookup {

  constructor(
    private readonly engine: TemplateEngine,
    readonly macros: MacroSet,
    readonly context: Record<string, unknown>,
    /** The calling render's own context (where the project's macros are defined). */
    readonly root: () => Lookup | undefined,
  ) {}

  /** The macro `name` defined by namespace `ns` (the project's name, a package's, or 'dbt'); undefined when it defines none. */
  find(ns: string, name: string): Fn | undefined {
    if (ns === this.macros.projectName) {
      if (!this.macros.projectMacros.has(name)) return undefined;
      const m = this.root()?.lookup(name);
      return typeof m === 'function' ? (m as Fn) : undefined;
    }
    if (!this.macros.namespaces.get(ns)?.includes(name)) return undefined;
    const s = this.scope(ns);
    s.current = this;
    const m = s.lookup.lookup(name);
    return typeof m === 'function' ? (m as Fn) : undefined;
  }

  /** Calls `ns.name` with this render as the scope's context, restoring the previous one after (a nested render's call). */
  call(ns: string, name: string, args: unknown[]): unknown {
    const scope = ns === this.macros.projectName ? undefined : this.sharedScopes().get(ns);
    const prev = scope?.current;
    const m = this.find(ns, name);
    if (m === undefined) throw new EngineError('compile', `macro '${ns}.${name}' is not defined`);
    try {
      return m(...args);
    } finally {
      if (scope !== undefined && prev !== undefined) scope.current = prev;
    }
  }

  private sharedScopes(): Map<string, SharedScope> {
    let byNs = shared.get(this.macros);
    if (byNs === undefined) shared.set(this.macros, (byNs = new Map()));
    return byNs;
  }

  /** Any definition of `name`: the project's, then the packages' (in load order), then dbt's. */
  findAnywhere(name: string): Fn | undefined {
    const own = this.find(this.macros.projectName, name);
    if (own) return own;
    for (const ns of this.macros.namespaces.keys()) {
      if (ns === BUILTIN_NS) continue;
      const m = this.find(ns, name);
      if (m) return m;
    }
    return this.find(BUILTIN_NS, name);
  }

  private scope(ns: string): SharedScope {
    const byNs = this.sharedScopes();
    const s = byNs.get(ns);
    if (s !== undefined) return s;
    const text = this.macros.scopeText.get(ns) ?? '';
    const captured: { context?: Lookup & { ctx: Record<string, unknown> } } = {};
    const ctx = {
      __dbt_scope_capture: function (this: Lookup & { ctx: Record<string, unknown> }) {
        captured.context = this;
        return '';
      },
    };
    try {
      // The package's files are the prefix (only their macros count); the body hands over the context they are defined in.
      this.engine.render(`__dbt_scope:${ns}`, SCOPE_CAPTURE, ctx, this.macros.scopeLabel.get(ns) ?? ns, text);
    } catch (err) {
      throw new EngineError('compile', `macros of package '${ns}' could not be loaded`, err);
    }
    const context = captured.context;
    const entry: SharedScope = { lookup: context ?? { lookup: () => undefined }, current: this };
    if (context !== undefined) context.ctx = forwardingContext(context.ctx, entry);
    byNs.set(ns, entry);
    return entry;
  }
}

/**
 * The context entries that reach the scopes: one object per namespace
 * (`dbt_utils.star`, `dbt.dateadd`), and dbt's built-in macros by their bare
 * names (`{{ dateadd(...) }}`), which the project's own macros of the same
 * name replace as they are defined.
 */
export function scopeEntries(scopes: MacroScopes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const ns of scopes.macros.namespaces.keys()) out[ns] = namespaceObject(scopes, ns);
  // The project's own name is a namespace too (`my_project.my_macro()`).
  if (scopes.macros.projectName !== '' && !scopes.macros.namespaces.has(scopes.macros.projectName)) out[scopes.macros.projectName] = namespaceObject(scopes, scopes.macros.projectName);
  for (const n of bareBuiltins(scopes.macros)) out[n] = (...a: unknown[]) => scopes.call(BUILTIN_NS, n, a);
  return out;
}

/** Gives a render its scopes (`state.scopes`, used by adapter.dispatch) and returns the context entries that reach them. */
export function withScopes(engine: TemplateEngine, macros: MacroSet, state: RenderState, ctx: Record<string, unknown>): Record<string, unknown> {
  const scopes = new MacroScopes(engine, macros, ctx, () => state.nj);
  state.scopes = scopes;
  return scopeEntries(scopes);
}

const bare = new WeakMap<MacroSet, readonly string[]>();
/** dbt's public built-in macros the project does not define itself (the names a template may call bare). */
function bareBuiltins(macros: MacroSet): readonly string[] {
  let names = bare.get(macros);
  if (names === undefined) bare.set(macros, (names = (macros.namespaces.get(BUILTIN_NS) ?? []).filter((n) => !macros.projectMacros.has(n) && !n.includes('__'))));
  return names;
}

const nameSets = new WeakMap<readonly string[], ReadonlySet<string>>();
const nameSet = (names: readonly string[]): ReadonlySet<string> => {
  let set = nameSets.get(names);
  if (set === undefined) nameSets.set(names, (set = new Set(names)));
  return set;
};

/**
 * `dbt_utils` in a template: `dbt_utils.star` is that package's macro. A proxy, so a render pays for the
 * macros it calls, not for every name of every package.
 */
function namespaceObject(scopes: MacroScopes, ns: string): Record<string, Fn> {
  const names = ns === scopes.macros.projectName ? scopes.macros.projectMacros : nameSet(scopes.macros.namespaces.get(ns) ?? []);
  return new Proxy({} as Record<string, Fn>, {
    get: (_t, name) => (typeof name === 'string' && names.has(name) ? (...a: unknown[]) => scopes.call(ns, name, a) : undefined),
    has: (_t, name) => typeof name === 'string' && names.has(name),
    ownKeys: () => [...names],
    getOwnPropertyDescriptor: (_t, name) => (typeof name === 'string' && names.has(name) ? { configurable: true, enumerable: true, value: (...a: unknown[]) => scopes.call(ns, name, a) } : undefined),
  });
}

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * A shared scope's context: its own macros, then the project's macros (global in dbt: a package's
 * macro may call them by name), then the calling render's context.
 */
function forwardingContext(defined: Record<string, unknown>, entry: SharedScope): Record<string, unknown> {
  const projectMacro = (k: string): Fn | undefined => {
    const cur = entry.current;
    if (!cur.macros.projectMacros.has(k)) return undefined;
    return (...a: unknown[]) => (cur.root()?.lookup(k) as Fn)(...a);
  };
  return new Proxy(defined, {
    get: (t, k) => (typeof k !== 'string' || own(t, k) ? t[k as string] : (projectMacro(k) ?? entry.current.context[k])),
    has: (t, k) => typeof k === 'string' && (own(t, k) || entry.current.macros.projectMacros.has(k) || k in entry.current.context),
  });
}
