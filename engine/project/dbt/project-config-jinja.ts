/**
 * dbt renders the config trees of `dbt_project.yml` (`models:`, `seeds:`,
 * `snapshots:`, `tests:`) before it applies them, so
 * `+enabled: "{{ var('load_source_data', false) }}"` or
 * `+schema: "{{ env_var('SCHEMA') }}"` take their rendered value. Only
 * `var`, `env_var` and `target` exist there, as in dbt. A value that is one
 * Jinja expression keeps its native type (`false` stays a boolean, so the
 * node is disabled) — dbt reads the rendered text back as a Python literal.
 * Hooks are left as written: they render per model when it runs.
 */
import { EngineError } from '../../errors.js';
import { lookupVar } from '../../home-env.js';
import { callArgs } from '../../template/call-args.js';
import type { TemplateEngine } from '../../template/template-engine.js';
import { normalizeKey } from './config-tree.js';
import { DBT_PROJECT_FILE, type DbtProjectFile } from './dbt-project-file.js';

export interface ProjectJinjaEnv {
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: Readonly<Record<string, unknown>>;
  readonly stepEnv?: Readonly<Record<string, string>>;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const HOOKS = new Set(['pre_hook', 'post_hook']);

/** `tree` with every Jinja string rendered (`section` names the tree in errors: `models`, `seeds` …). */
export function renderProjectTree(tree: Readonly<Record<string, unknown>>, section: string, engine: TemplateEngine, env: ProjectJinjaEnv): Record<string, unknown> {
  const ctx = projectContext(env);
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return v.includes('{{') || v.includes('{%') ? renderValue(v, path, engine, ctx) : v;
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`));
    if (!isMap(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, HOOKS.has(normalizeKey(k)) ? x : walk(x, `${path}.${k}`)]));
  };
  return walk(tree, section) as Record<string, unknown>;
}

function projectContext(env: ProjectJinjaEnv): Record<string, unknown> {
  return {
    var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      const name = String(positional[0] ?? '');
      if (Object.prototype.hasOwnProperty.call(env.vars, name)) return env.vars[name];
      if (positional.length >= 2) return positional[1];
      throw new Error(`var('${name}') is not defined in ${DBT_PROJECT_FILE} or --vars and has no default`);
    },
    env_var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      const name = String(positional[0] ?? '');
      const v = lookupVar(name, env.stepEnv);
      if (v !== undefined) return v;
      if (positional.length >= 2) return positional[1];
      throw new Error(`env_var('${name}') is not set and has no default`);
    },
    target: env.target,
  };
}

function renderValue(text: string, path: string, engine: TemplateEngine, ctx: Record<string, unknown>): unknown {
  try {
    // One whole `{{ expr }}`: its value, typed, as dbt's native rendering gives it.
    const whole = /^\s*\{\{([\s\S]*)\}\}\s*$/.exec(text)?.[1];
    if (whole !== undefined && !whole.includes('}}')) {
      let value: unknown;
      engine.render(`dbt_project:${text}`, `{{ __native(${whole}) }}`, { ...ctx, __native: (x: unknown) => ((value = x), '') }, DBT_PROJECT_FILE);
      return typeof value === 'string' ? literal(value) : value;
    }
    return literal(engine.render(`dbt_project:${text}`, text, ctx, DBT_PROJECT_FILE));
  } catch (err) {
    throw new EngineError('load', `${DBT_PROJECT_FILE}: ${path}: ${(err as Error).message}`);
  }
}

/** The rendered text read back as dbt does: booleans, none and numbers become values. */
function literal(s: string): unknown {
  const t = s.trim();
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  if (/^(none|null)$/i.test(t)) return null;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return s;
}

/** The project file with its four config trees rendered. */
export function renderedProjectFile(pf: DbtProjectFile, engine: TemplateEngine, env: ProjectJinjaEnv): DbtProjectFile {
  return {
    ...pf,
    models: renderProjectTree(pf.models, 'models', engine, env),
    seeds: renderProjectTree(pf.seeds, 'seeds', engine, env),
    snapshots: renderProjectTree(pf.snapshots, 'snapshots', engine, env),
    tests: renderProjectTree(pf.tests, 'tests', engine, env),
  };
}
