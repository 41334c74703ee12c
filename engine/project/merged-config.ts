/**
 * `-R` merged mode: a root with its own config takes the files
 * of its immediate child projects into one DAG. For files under such a child
 * the effective config is the root's merged with the child's: vars deep-merged
 * (child wins), defaults scalars child-wins, defaults.tags unioned,
 * defaults.hooks concatenated (root first). The child's target, dev and
 * dbt_project have no effect; naming is unchanged.
 */
import { join } from 'node:path';
import { checkUnresolvedDefaultsAndVars, loadConfig, type BuildConfig, type Defaults, type LoadConfigOptions, type SettingsFlags } from './config.js';

export interface ChildConfig {
  /** The child directory name. */
  readonly dir: string;
  /** Root config merged with the child's. */
  readonly config: BuildConfig;
  /** Template vars for the child's models (`--vars` applied last). */
  readonly vars: Readonly<Record<string, unknown>>;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of plain mappings; `over` wins, lists and scalars are replaced whole. */
export function deepMerge(base: Readonly<Record<string, unknown>>, over: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isMap(b) && isMap(v) ? deepMerge(b, v) : v;
  }
  return out;
}

const IGNORED_IN_CHILD = ['target', 'dev', 'dbt_project'];

function mergeDefaults(root: Defaults, child: Defaults, set: ReadonlySet<string>): Defaults {
  const pick = <K extends keyof Defaults>(k: K): Defaults[K] => (set.has(k) ? child[k] : root[k]);
  return {
    mode: pick('mode'),
    schema: pick('schema'),
    database: pick('database'),
    tags: [...new Set([...root.tags, ...child.tags])],
    unique_key: pick('unique_key'),
    update_key: pick('update_key'),
    merge_strategy: pick('merge_strategy'),
    enabled: pick('enabled'),
    hooks: { start: [...root.hooks.start, ...child.hooks.start], end: [...root.hooks.end, ...child.hooks.end] },
    drop_cascade: pick('drop_cascade'),
  };
}

/** Loads and merges the config of each merged child, in the order given. */
export function loadChildConfigs(
  root: string,
  rootConfig: BuildConfig,
  children: readonly string[],
  flags: SettingsFlags,
  opts: LoadConfigOptions,
): ChildConfig[] {
  return children.map((dir) => {
    const own = loadConfig(join(root, dir), opts, `${dir}/`);
    const ignored = IGNORED_IN_CHILD.filter((k) => own.keys.has(k));
    if (ignored.length > 0) opts.logger.log('debug', `${own.fileRel}: ${ignored.join(', ')} of a merged sub-project have no effect`);
    // Unresolved ${VAR} tokens count in the child's own defaults.schema/database and vars.
    checkUnresolvedDefaultsAndVars(own, flags);
    const vars = deepMerge(rootConfig.vars, own.vars);
    const config: BuildConfig = {
      ...rootConfig,
      vars,
      defaults: mergeDefaults(rootConfig.defaults, own.defaults, own.defaultsSet),
    };
    return { dir, config, vars: { ...vars, ...(flags.vars ?? {}) } };
  });
}
