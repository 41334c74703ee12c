/**
 * dbt's config layers and how they merge: `dbt_project.yml` folder trees
 * (the deepest folder wins), then a properties file's `config:`, then the
 * model's own `{{ config(...) }}`. Tags and hooks add up across layers;
 * every other key is replaced by the more specific layer.
 */

/** Configs whose value is itself a mapping (so a mapping under them is not a sub-folder). */
const MAPPING_CONFIGS = new Set(['persist_docs', 'meta', 'docs', 'column_types', 'grants', 'quoting', 'contract', 'labels', 'indexes']);

export type ConfigMap = Readonly<Record<string, unknown>>;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A dbt config key as written in `config()` (`pre_hook`) or a tree (`+pre-hook`): one spelling. */
export const normalizeKey = (k: string): string => k.replace(/^\+/, '').replace(/-/g, '_');

/** Splits one tree level into its configs and its sub-folders. */
function level(node: Record<string, unknown>, known: ReadonlySet<string>): { configs: Record<string, unknown>; folders: Record<string, Record<string, unknown>> } {
  const configs: Record<string, unknown> = {};
  const folders: Record<string, Record<string, unknown>> = {};
  for (const [k, v] of Object.entries(node)) {
    const key = normalizeKey(k);
    if (k.startsWith('+') || (known.has(key) && (!isMap(v) || MAPPING_CONFIGS.has(key)))) configs[key] = v;
    else if (isMap(v)) folders[k] = v;
    else configs[key] = v; // an unknown plain key: kept so the caller can name it
  }
  return { configs, folders };
}

/**
 * The configs of a resource at `path` (folders under the resource path, then
 * the file's stem) in project `project`, from the tree under `models:` (or
 * `seeds:` …). Deeper levels override shallower ones.
 */
export function treeConfig(tree: ConfigMap, project: string, path: readonly string[], known: ReadonlySet<string>): Record<string, unknown> {
  const layers: Record<string, unknown>[] = [];
  let { configs, folders } = level({ ...tree }, known);
  layers.push(configs);
  let node = folders[project];
  for (const part of path) {
    if (!node) break;
    ({ configs, folders } = level(node, known));
    layers.push(configs);
    node = folders[part];
  }
  if (node) layers.push(level(node, known).configs);
  return layers.reduce((acc, l) => mergeConfig(acc, l), {} as Record<string, unknown>);
}

const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** `over` on top of `base`: tags union, hooks concatenated, meta merged, the rest replaced. */
export function mergeConfig(base: ConfigMap, over: ConfigMap): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k0, v] of Object.entries(over)) {
    const k = normalizeKey(k0);
    if (k === 'tags') out.tags = [...new Set([...list(out.tags), ...list(v)].map(String))];
    else if (k === 'pre_hook' || k === 'post_hook') out[k] = [...list(out[k]), ...list(v)];
    else if (k === 'meta' && isMap(v) && isMap(out.meta)) out.meta = { ...out.meta, ...v };
    else out[k] = v;
  }
  return out;
}
