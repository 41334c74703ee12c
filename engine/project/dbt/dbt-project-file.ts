/**
 * `dbt_project.yml`: the project's name and profile, the folders each kind of
 * resource lives in, vars, and the config trees (`models:`, `seeds:`,
 * `snapshots:`, `tests:`/`data_tests:`). A key we do not act on is reported
 * by name, never dropped in silence.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml } from '../../yaml-lib.js';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { yamlErrorDetail } from '../yaml-error.js';

export const DBT_PROJECT_FILE = 'dbt_project.yml';

export interface DbtProjectFile {
  readonly name: string;
  readonly profile: string;
  readonly modelPaths: readonly string[];
  readonly seedPaths: readonly string[];
  readonly macroPaths: readonly string[];
  readonly testPaths: readonly string[];
  readonly snapshotPaths: readonly string[];
  readonly vars: Readonly<Record<string, unknown>>;
  readonly models: Readonly<Record<string, unknown>>;
  readonly seeds: Readonly<Record<string, unknown>>;
  readonly snapshots: Readonly<Record<string, unknown>>;
  readonly tests: Readonly<Record<string, unknown>>;
  readonly onRunStart: readonly string[];
  readonly onRunEnd: readonly string[];
  /** `dispatch:` — macro namespace → the packages adapter.dispatch searches, in order. */
  readonly dispatch: ReadonlyMap<string, readonly string[]>;
}

/** Keys that only describe the project (no effect on what is built). */
const DESCRIPTIVE = new Set(['name', 'version', 'config-version', 'profile', 'require-dbt-version', 'clean-targets', 'target-path', 'log-path', 'packages-install-path', 'docs-paths', 'asset-paths', 'analysis-paths', 'flags', 'query-comment', 'quoting']);
const USED = new Set(['model-paths', 'source-paths', 'seed-paths', 'data-paths', 'macro-paths', 'test-paths', 'snapshot-paths', 'vars', 'models', 'seeds', 'snapshots', 'tests', 'data_tests', 'on-run-start', 'on-run-end', 'sources', 'dispatch']);

export const isDbtProject = (dir: string): boolean => existsSync(join(dir, DBT_PROJECT_FILE));

function paths(doc: Record<string, unknown>, keys: readonly string[], fallback: string): string[] {
  for (const k of keys) {
    const v = doc[k];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || v.some((p) => typeof p !== 'string')) throw new EngineError('load', `${DBT_PROJECT_FILE}: ${k} must be a list of folder names`);
    return (v as string[]).map((p) => p.replace(/\/+$/, ''));
  }
  return [fallback];
}

function mapping(doc: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = doc[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new EngineError('load', `${DBT_PROJECT_FILE}: ${key} must be a mapping`);
  return v as Record<string, unknown>;
}

function dispatchConfig(v: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (v === undefined || v === null) return out;
  if (!Array.isArray(v)) throw new EngineError('load', `${DBT_PROJECT_FILE}: dispatch must be a list of {macro_namespace, search_order}`);
  v.forEach((e: unknown, i) => {
    const entry = (e ?? {}) as { macro_namespace?: unknown; search_order?: unknown };
    const order = entry.search_order;
    if (typeof entry.macro_namespace !== 'string' || !Array.isArray(order) || order.some((x) => typeof x !== 'string')) {
      throw new EngineError('load', `${DBT_PROJECT_FILE}: dispatch[${i}] needs macro_namespace (a name) and search_order (a list of package names)`);
    }
    out.set(entry.macro_namespace, order as string[]);
  });
  return out;
}

const hooks = (v: unknown): string[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);

export function loadDbtProjectFile(root: string, logger: Logger): DbtProjectFile {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(join(root, DBT_PROJECT_FILE), 'utf8')) ?? {};
  } catch (err) {
    throw new EngineError('load', `could not parse ${DBT_PROJECT_FILE}: ${yamlErrorDetail(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new EngineError('load', `${DBT_PROJECT_FILE}: expected a mapping at the top level`);
  const d = doc as Record<string, unknown>;
  if (typeof d.name !== 'string' || d.name === '') throw new EngineError('load', `${DBT_PROJECT_FILE}: name is required`);
  for (const k of Object.keys(d)) {
    if (!DESCRIPTIVE.has(k) && !USED.has(k)) logger.log('warn', `${DBT_PROJECT_FILE}: key '${k}' is not supported and has no effect`);
  }
  const vars = mapping(d, 'vars');
  return {
    name: d.name,
    profile: typeof d.profile === 'string' && d.profile !== '' ? d.profile : d.name,
    modelPaths: paths(d, ['model-paths', 'source-paths'], 'models'),
    seedPaths: paths(d, ['seed-paths', 'data-paths'], 'seeds'),
    macroPaths: paths(d, ['macro-paths'], 'macros'),
    testPaths: paths(d, ['test-paths'], 'tests'),
    snapshotPaths: paths(d, ['snapshot-paths'], 'snapshots'),
    vars,
    models: mapping(d, 'models'),
    seeds: mapping(d, 'seeds'),
    snapshots: mapping(d, 'snapshots'),
    tests: { ...mapping(d, 'tests'), ...mapping(d, 'data_tests') },
    onRunStart: hooks(d['on-run-start']),
    onRunEnd: hooks(d['on-run-end']),
    dispatch: dispatchConfig(d.dispatch),
  };
}
