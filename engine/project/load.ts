/**
 * Loads a build project: the config file, the settings from
 * the flags, every discovered file classified and named, front-matter merged
 * over the defaults and validated. Everything here is load-stage: a failure
 * is reported as `could not load build project from <abs>: …`.
 */
import { readFileSync, statSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { recordingLogger, type Level, type Logger } from '../log.js';
import { loadConfig, resolveSettings, type BuildConfig, type ConfigMemo, type Settings, type SettingsFlags } from './config.js';
import type { DataTest } from './data-tests.js';
import { discover, unusedReason, type DiscoverOptions, type DiscoveredFile, type SeedFormat } from './discover.js';
import { parseFrontMatter, type FrontMatter } from './front-matter.js';
import { defaultModelConfig, incrementalStyle, mergeFrontMatter, validateModelConfig, type IncrementalStyle, type ModelConfig } from './model-config.js';
import { loadChildConfigs, type ChildConfig } from './merged-config.js';
import { nameNode, type NodeName } from './naming.js';

export interface ModelSource {
  readonly kind: 'model';
  readonly name: string;
  readonly file: string;
  readonly rel: string;
  readonly abs: string;
  readonly naming: NodeName;
  /** Whether the file had front-matter (then config() calls render to nothing). */
  readonly hasFrontMatter: boolean;
  /** The text after front-matter removal. */
  readonly body: string;
  readonly config: ModelConfig;
  /** How its incremental filter is written (`dbt` also in our own format: `{% if is_incremental() %}`). */
  readonly style: IncrementalStyle;
  readonly tests: readonly DataTest[];
  /** Set for a model of a dbt project (whose `--full-refresh` keeps views as views). */
  readonly dbtProject?: true;
  /** `-R` merged mode: the sub-project's vars (root's deep-merged with the child's), replacing the project vars. */
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface SeedSource {
  readonly kind: 'seed';
  readonly name: string;
  readonly file: string;
  readonly rel: string;
  readonly abs: string;
  readonly format: SeedFormat;
  readonly naming: NodeName;
}

export interface MacroSource {
  readonly file: string;
  /** Discovery-relative directory ('' at the root). */
  readonly dir: string;
  readonly text: string;
}

export interface Project {
  readonly root: string;
  readonly config: BuildConfig;
  readonly settings: Settings;
  readonly models: readonly ModelSource[];
  readonly seeds: readonly SeedSource[];
  readonly macros: readonly MacroSource[];
  /** Set when the project was loaded from dbt_project.yml (engine/project/dbt/). */
  readonly format?: 'dbt';
  /**
   * Everything the loaded form of a model file depends on besides the file
   * (the config files, settings from the flags, merged sub-projects): equal
   * keys and an unchanged file give an equal ModelSource (the compile cache).
   */
  readonly loadKey?: string;
}

export interface LoadOptions extends SettingsFlags {
  readonly logger: Logger;
  readonly stepEnv?: Readonly<Record<string, string>>;
  /** `-R` merged mode: child project directories whose files join this DAG. */
  readonly mergeChildren?: readonly string[];
  /** The compile cache (engine/compile/cache-session.ts): unchanged files are not read, or not even loaded again. */
  readonly cache?: LoadCache;
  /** Called with the walk's files before any is read (a compile starts its render workers: engine/compile/parallel-render.ts). */
  readonly onWalk?: (files: readonly DiscoveredFile[]) => void;
}

/** What the compile cache watches of a walk: the directories it lists, and whether it meets a symbolic link. */
export type WalkWatch = Pick<DiscoverOptions, 'onDir' | 'onLink'>;

/** What the compile cache offers the loader. */
export interface LoadCache extends ConfigMemo {
  /** Reads a model file and splits its front-matter with `parse` (unchanged files are answered from their stat stamps). */
  readModelSource(abs: string, parse: (text: string) => FrontMatter): FrontMatter;
  /** The walk, or the last one when nothing was added or removed since. */
  walk(key: string, run: (watch?: WalkWatch) => { files: readonly DiscoveredFile[]; ignored: readonly string[] }): { files: readonly DiscoveredFile[]; ignored: readonly string[]; reused?: boolean };
  /** A model file loaded by `load` — or the last load's object when the file and `loadKey` are unchanged (its warnings logged again). */
  loadModel(f: DiscoveredFile, loadKey: string, logger: Logger, load: (logger: Logger) => ModelSource): ModelSource;
  loadSeed(f: DiscoveredFile, loadKey: string, logger: Logger, load: (logger: Logger) => SeedSource): SeedSource;
}

/** Resolves and checks the build path. */
export function resolveBuildPath(path: string): string {
  const abs = resolve(path);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new EngineError('load', `could not access project directory: ${abs}`);
  }
  if (!st.isDirectory()) throw new EngineError('load', `path is not a directory: ${abs}`);
  return abs;
}

const loadError = (root: string, err: unknown) =>
  err instanceof EngineError && err.code === 'usage' ? err : EngineError.wrap(`could not load build project from ${root}`, err, 'load');

export function loadProject(path: string, opts: LoadOptions): Project {
  const root = resolveBuildPath(path);
  try {
    const configOpts = { logger: opts.logger, stepEnv: opts.stepEnv, ...(opts.cache ? { configs: opts.cache } : {}) };
    const config = loadConfig(root, configOpts);
    const settings = resolveSettings(config, opts);
    const children = opts.mergeChildren && opts.mergeChildren.length > 0 ? loadChildConfigs(root, config, opts.mergeChildren, opts, configOpts) : [];
    return loadWithConfig(root, config, settings, opts, children);
  } catch (err) {
    throw loadError(root, err);
  }
}

export function loadWithConfig(root: string, config: BuildConfig, settings: Settings, opts: LoadOptions, children: readonly ChildConfig[] = []): Project {
  const walk = (watch?: WalkWatch): { files: readonly DiscoveredFile[]; ignored: readonly string[]; reused?: boolean } => {
    const ignored: string[] = [];
    return { files: discover(root, { dbtProject: config.dbtProject, mergeChildren: children.map((c) => c.dir), ignored, ...watch }), ignored };
  };
  const { files, ignored, reused } = opts.cache ? opts.cache.walk(JSON.stringify([config.dbtProject, children.map((c) => c.dir)]), walk) : walk();
  for (const f of ignored) opts.logger.log('warn', `${f}: not used (${unusedReason(f)})`);
  opts.onWalk?.(files);
  const loadKey = JSON.stringify([config, settings, children], withSets);
  const cache = opts.cache;
  const models: ModelSource[] = [];
  const seeds: SeedSource[] = [];
  const macros: MacroSource[] = [];
  const seen = new Map<string, DiscoveredFile>();
  const rootScope: Scope = { config, base: defaultModelConfig(config.defaults) };
  const scopes = new Map(children.map((c): [string, Scope] => [c.dir, { config: c.config, base: defaultModelConfig(c.config.defaults), vars: c.vars }]));
  for (const f of files) {
    const scope = (f.subProject !== undefined ? scopes.get(f.subProject) : undefined) ?? rootScope;
    if (f.kind === 'macro') {
      macros.push({ file: f.file, dir: posix.dirname(f.rel) === '.' ? '' : posix.dirname(f.rel), text: readFileSync(f.abs, 'utf8') });
      continue;
    }
    if (!reused) checkDuplicate(seen, f); // a walk reused had no duplicates when it was made
    if (f.kind === 'seed') {
      const d = scope.config.defaults;
      const load = (logger: Logger): SeedSource => {
        const naming = nameNode({ kind: 'seed', name: f.name, rel: f.rel, defaultsSchema: d.schema, defaultsDatabase: d.database }, settings, logger);
        return { kind: 'seed', name: f.name, file: f.file, rel: f.rel, abs: f.abs, format: f.format!, naming };
      };
      seeds.push(cache ? cache.loadSeed(f, loadKey, opts.logger, load) : load(opts.logger));
      continue;
    }
    const load = (logger: Logger) => loadModel(f, scope, settings, logger, cache);
    models.push(cache ? cache.loadModel(f, loadKey, opts.logger, load) : load(opts.logger));
  }
  return { root, config, settings, models, seeds, macros, loadKey };
}

const withSets = (_key: string, v: unknown) => (v instanceof Set ? [...(v as Set<unknown>)] : v);

function checkDuplicate(seen: Map<string, DiscoveredFile>, f: DiscoveredFile): void {
  const key = f.name.toLowerCase();
  const prev = seen.get(key);
  if (!prev) {
    seen.set(key, f);
    return;
  }
  if (prev.kind !== f.kind) throw new EngineError('load', `duplicate name '${f.name}': found as both model and seed`);
  throw new EngineError('load', `duplicate ${f.kind} name '${f.name}': found in both '${prev.file}' and '${f.file}'`);
}

/** The config a file is loaded under: the root's, or a merged sub-project's. */
interface Scope {
  readonly config: BuildConfig;
  readonly base: ModelConfig;
  readonly vars?: Readonly<Record<string, unknown>>;
}

/**
 * Merged configs by front-matter object and base: models whose front-matter
 * is one shared object (the compile cache keeps each distinct front-matter
 * once) share one config — a merge that logged nothing depends on nothing
 * else (a model's name appears only in its warnings and errors).
 */
const merges = new WeakMap<object, WeakMap<ModelConfig, ModelConfig>>();

function mergedConfig(name: string, base: ModelConfig, fm: Record<string, unknown>, logger: Logger): ModelConfig {
  const byBase = merges.get(fm);
  const hit = byBase?.get(base);
  if (hit !== undefined) return hit;
  const logged: [Level, string][] = [];
  const merged = mergeFrontMatter(name, base, fm, recordingLogger(logger, logged));
  // A merge that warned is not shared: the next model with this front-matter must warn too.
  if (logged.length === 0) {
    if (byBase === undefined) merges.set(fm, new WeakMap([[base, merged]]));
    else byBase.set(base, merged);
  }
  return merged;
}

function loadModel(f: DiscoveredFile, { config, base, vars }: Scope, settings: Settings, logger: Logger, cache?: LoadCache): ModelSource {
  const fm = cache ? cache.readModelSource(f.abs, (text) => parseFrontMatter(f.name, text)) : parseFrontMatter(f.name, readFileSync(f.abs, 'utf8'));
  const merged = fm.config ? mergedConfig(f.name, base, fm.config, logger) : base;
  const style = incrementalStyle(f.name, fm.body);
  const tests = validateModelConfig(f.name, merged, style);
  const naming = nameNode(
    { kind: 'model', name: f.name, rel: f.rel, schema: fm.config ? merged.schema : undefined, database: fm.config ? (fm.config.database as string | undefined) : undefined, defaultsSchema: config.defaults.schema, defaultsDatabase: config.defaults.database },
    settings,
    logger,
  );
  return { kind: 'model', name: f.name, file: f.file, rel: f.rel, abs: f.abs, naming, hasFrontMatter: fm.config !== null, body: fm.body, config: merged, style, tests, ...(vars ? { vars } : {}) };
}

