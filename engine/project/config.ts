/**
 * The config file `service_build.yml`: detection, `${VAR}`
 * substitution, parsing and validation of every key, and the resolution of
 * naming mode, dev schema, target and vars from the file plus the flags.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml } from '../yaml-lib.js';
import { array, boolean, string, type, unknown, validate, type Infer } from 'superstruct';
import { closedForEditors, described, keysOf, mapOf, maybe, oneOf, oneOfStrings } from '../schemas/shape.js';
import { EngineError } from '../errors.js';
import { lookupVar } from '../home-env.js';
import { recordingLogger, type Level, type Logger } from '../log.js';
import { substituteEnv, unresolvedIn } from './env-substitution.js';
import { yamlErrorDetail } from './yaml-error.js';
import { isMergeStrategy, MERGE_STRATEGIES, mergeStrategyError, MODES, resolveModeValue, type MergeStrategy, type Mode } from './modes.js';

const DefaultsShape = closedForEditors(type({
  mode: maybe(oneOfStrings([...MODES, 'table'], 'materialization of every model without its own: view, table (= full-refresh), incremental, append, truncate')),
  schema: maybe(string()),
  database: maybe(string()),
  tags: maybe(array(string())),
  unique_key: maybe(oneOf([string(), array(string())])),
  update_key: maybe(string()),
  merge_strategy: maybe(oneOfStrings(MERGE_STRATEGIES, 'delete+insert, update+insert or insert')),
  enabled: maybe(boolean()),
  hooks: maybe(closedForEditors(type({ start: maybe(array(unknown())), end: maybe(array(unknown())) }))),
  drop_cascade: maybe(boolean()),
}));

/**
 * The shape of service_build.yml: the loader validates every file against
 * it, and schemas/service_build.schema.json is generated from it. Unknown
 * keys load with a warning naming them; the schema refuses them, so an
 * editor marks a typo (`targt:`) as it is typed.
 */
export const ConfigShape = closedForEditors(type({
  target: maybe(described(string(), 'the connection models are built in')),
  dev: maybe(oneOf([type({ schema: maybe(string()), target: maybe(string()), database: maybe(string()) }), unknown()])),
  dbt_project: maybe(oneOf([boolean(), closedForEditors(type({ models_path: maybe(string()), seeds_path: maybe(string()) }))])),
  vars: maybe(described(mapOf(unknown()), 'template variables, read with var("name") or as {{ name }}')),
  defaults: maybe(DefaultsShape),
}));
const KNOWN_KEYS = keysOf(ConfigShape);
const KNOWN_DEFAULTS = keysOf(DefaultsShape);
type RawConfig = Infer<typeof ConfigShape>;

export interface Defaults {
  readonly mode: Mode;
  readonly schema?: string;
  readonly database?: string;
  readonly tags: readonly string[];
  readonly unique_key?: string | readonly string[];
  readonly update_key?: string;
  readonly merge_strategy: MergeStrategy;
  readonly enabled: boolean;
  readonly hooks: { readonly start: readonly unknown[]; readonly end: readonly unknown[] };
  readonly drop_cascade: boolean;
}

export interface DevBlock {
  readonly schema?: string;
  readonly target?: string;
  readonly database?: string;
}

export interface BuildConfig {
  /** Absolute path of the config file, or undefined when the project has none. */
  readonly file?: string;
  /** The file's name relative to the build path, for messages (`service_build.yml`). */
  readonly fileRel: string;
  readonly target?: string;
  readonly dev?: DevBlock;
  readonly dbtProject: { readonly modelsPath: string; readonly seedsPath: string } | null;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly defaults: Defaults;
  /** The keys written under `defaults:` (a merged sub-project overrides only these, merged `-R` mode). */
  readonly defaultsSet: ReadonlySet<string>;
  /** Top-level keys written in the file. */
  readonly keys: ReadonlySet<string>;
  /** Variables whose `${…}` tokens are still in the values. */
  readonly unresolved: ReadonlySet<string>;
}

// sling_build.yml is the name Sling projects use: they move over unchanged.
const CONFIG_NAMES = ['service_build.yml', 'service_build.yaml', 'sling_build.yml', 'sling_build.yaml'];

/** The config file names present in `dir` (matched case-insensitively), `.yml` first. */
export function findConfigFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const want of CONFIG_NAMES) {
    const hit = entries.find((e) => e.toLowerCase() === want);
    if (hit) found.push(hit);
  }
  return found;
}

/** Whether `name` is a config file name (any case). Length first: a project's walk asks this of every file. */
export const isConfigFileName = (name: string): boolean => name.length >= 15 && name.length <= 18 && CONFIG_NAMES.includes(name.toLowerCase());

export interface LoadConfigOptions {
  readonly logger: Logger;
  readonly stepEnv?: Readonly<Record<string, string>>;
  /** Parsed config files by their text (the compile cache): a warm compile neither loads nor runs the YAML parser. */
  readonly configs?: ConfigMemo;
}

/** A config file's parsed form and the warnings its parse logged, by everything the parse reads (ConfigMemo key). */
export interface ConfigMemo {
  parsedConfig(key: string): { readonly config: BuildConfig; readonly logs: readonly (readonly [Level, string])[] } | undefined;
  keepConfig(key: string, config: BuildConfig, logs: readonly (readonly [Level, string])[]): void;
}

const DEFAULT_DEFAULTS: Defaults = {
  mode: 'full-refresh',
  tags: [],
  merge_strategy: 'delete+insert',
  enabled: true,
  hooks: { start: [], end: [] },
  drop_cascade: false,
};

export function emptyConfig(): BuildConfig {
  return { fileRel: 'service_build.yml', dbtProject: null, vars: {}, defaults: DEFAULT_DEFAULTS, defaultsSet: new Set(), keys: new Set(), unresolved: new Set() };
}

/**
 * Loads the config file in `dir` (or an empty config when there is none).
 * `relDir` is `dir` relative to the build path (`sales/` for a merged
 * sub-project), so messages name the file as the user sees it.
 */
export function loadConfig(dir: string, opts: LoadConfigOptions, relDir = ''): BuildConfig {
  const names = findConfigFiles(dir);
  if (names.length === 0) return emptyConfig();
  if (names.length > 1) opts.logger.log('warn', `both ${relDir}${names[0]} and ${relDir}${names[1]} found; using ${relDir}${names[0]}`);
  const fileRel = relDir + names[0]!;
  const file = join(dir, names[0]!);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new EngineError('load', `could not load ${fileRel}: ${(err as Error).message}`);
  }
  return parseConfig(text, file, fileRel, opts);
}

// Unresolved tokens are swapped for YAML-safe placeholders while parsing
// (`dev: {schema: dev_${USER}}` must still parse when USER is unset) and put
// back afterwards, so the value keeps the literal token the docs reports.
const PLACEHOLDER = /__service_unresolved_(\d+)__/g;

function restoreTokens(value: unknown, tokens: readonly string[]): unknown {
  if (typeof value === 'string') return value.replace(PLACEHOLDER, (_, i: string) => tokens[Number(i)]!);
  if (Array.isArray(value)) return value.map((v) => restoreTokens(v, tokens));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, restoreTokens(v, tokens)]));
  }
  return value;
}

export function parseConfig(text: string, file: string, fileRel: string, opts: LoadConfigOptions): BuildConfig {
  const sub = substituteEnv(text, (name) => lookupVar(name, opts.stepEnv));
  const memo = opts.configs;
  if (memo === undefined) return parseSubstituted(sub, file, fileRel, opts.logger);
  // The parse reads the substituted text (and which tokens stayed unresolved) and names the file.
  const key = JSON.stringify([file, fileRel, sub.text, [...sub.unresolved].sort()]);
  const hit = memo.parsedConfig(key);
  if (hit !== undefined) {
    for (const [level, message] of hit.logs) opts.logger.log(level, message);
    return hit.config;
  }
  const logs: [Level, string][] = [];
  const config = parseSubstituted(sub, file, fileRel, recordingLogger(opts.logger, logs));
  memo.keepConfig(key, config, logs);
  return config;
}

function parseSubstituted(sub: ReturnType<typeof substituteEnv>, file: string, fileRel: string, logger: Logger): BuildConfig {
  const tokens: string[] = [];
  const safe = sub.text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g, (whole, name: string) => {
    if (!sub.unresolved.has(name)) return whole;
    tokens.push(whole);
    return `__service_unresolved_${tokens.length - 1}__`;
  });
  let doc: unknown;
  try {
    doc = restoreTokens(parseYaml(safe) ?? {}, tokens);
  } catch (err) {
    throw new EngineError('load', `could not load ${fileRel}: could not parse config file: ${yamlErrorDetail(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new EngineError('load', `could not load ${fileRel}: could not parse config file: expected a mapping at the top level`);
  }
  const [structErr, raw] = validate(doc, ConfigShape);
  if (structErr) {
    const f = structErr.failures()[0]!;
    const where = f.path.length > 0 ? f.path.join('.') : 'config';
    throw new EngineError('load', `could not load ${fileRel}: could not parse config file: ${where}: ${f.message}`);
  }
  const unknownKeys = Object.keys(doc).filter((k) => !KNOWN_KEYS.has(k));
  const unknownDefaults = Object.keys((doc as { defaults?: object }).defaults ?? {}).filter((k) => !KNOWN_DEFAULTS.has(k));
  if (unknownKeys.length + unknownDefaults.length > 0) {
    const all = [...unknownKeys, ...unknownDefaults.map((k) => `defaults.${k}`)];
    // Nothing a project declares is dropped in silence: a key we do not know is named on a warning.
    logger.log('warn', `${fileRel}: ignoring unknown key(s): ${all.join(', ')}`);
  }
  return {
    file,
    fileRel,
    target: raw.target,
    dev: devBlock(raw),
    dbtProject: dbtProject(raw),
    vars: raw.vars ?? {},
    defaults: validateDefaults(raw, fileRel, logger),
    defaultsSet: new Set(Object.keys((doc as { defaults?: object }).defaults ?? {})),
    keys: new Set(Object.keys(doc)),
    unresolved: sub.unresolved,
  };
}

function devBlock(raw: RawConfig): DevBlock | undefined {
  if (!('dev' in raw) || raw.dev === undefined) return undefined;
  const d = raw.dev;
  if (d === null || typeof d !== 'object') return {};
  return d as DevBlock;
}

function dbtProject(raw: RawConfig): BuildConfig['dbtProject'] {
  const d = raw.dbt_project;
  if (d === undefined || d === false) return null;
  if (d === true) return { modelsPath: 'models', seedsPath: 'seeds' };
  return { modelsPath: d.models_path ?? 'models', seedsPath: d.seeds_path ?? 'seeds' };
}

function validateDefaults(raw: RawConfig, fileRel: string, logger: Logger): Defaults {
  const d = raw.defaults ?? {};
  let mode: Mode = 'full-refresh';
  if (d.mode !== undefined) {
    const r = resolveModeValue(d.mode);
    if (!r.ok) {
      const msg = r.error.startsWith('unknown mode') ? `unknown defaults.mode '${d.mode}'; expected one of: append, full-refresh, incremental, truncate, view` : `defaults.mode: ${r.error}`;
      throw new EngineError('load', `${fileRel}: ${msg}`);
    }
    if (r.warning === 'snapshot') logger.log('warn', `${fileRel}: defaults.mode: 'snapshot' mode is deprecated and means append-only insert; use 'append'`);
    mode = r.mode;
  }
  if (d.merge_strategy !== undefined && !isMergeStrategy(d.merge_strategy)) {
    throw new EngineError('load', `${fileRel}: ${mergeStrategyError(d.merge_strategy).replace('merge_strategy', 'defaults.merge_strategy')}`);
  }
  return {
    mode,
    schema: d.schema,
    database: d.database,
    tags: d.tags ?? [],
    unique_key: d.unique_key,
    update_key: d.update_key,
    merge_strategy: (d.merge_strategy?.trim().toLowerCase() as MergeStrategy | undefined) ?? 'delete+insert',
    enabled: d.enabled ?? true,
    hooks: { start: d.hooks?.start ?? [], end: d.hooks?.end ?? [] },
    drop_cascade: d.drop_cascade ?? false,
  };
}

/** What the command line (or a pipeline step) says about naming, target and vars. */
export interface SettingsFlags {
  readonly target?: string;
  readonly schema?: string;
  readonly prod?: boolean;
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface Settings {
  readonly naming: 'prod' | 'dev';
  readonly devSchema?: string;
  readonly devDatabase?: string;
  /** Target connection name, if any. */
  readonly target?: string;
  readonly vars: Readonly<Record<string, unknown>>;
}

function unsetError(fileRel: string, field: string, name: string, hint: string): EngineError {
  return new EngineError(
    'config',
    `${fileRel}: ${field} uses \${${name}} but ${name} is not set.\nSet it in ~/.service/env.yaml under \`env:\` or export it in the shell${hint}`,
  );
}

/** Resolution plus the "unresolved ${VAR} in a used field" checks, in the documented order. */
export function resolveSettings(config: BuildConfig, flags: SettingsFlags): Settings {
  if (flags.prod && flags.schema !== undefined) throw new EngineError('usage', 'cannot combine --prod and --schema');
  let naming: 'prod' | 'dev' = config.dev !== undefined ? 'dev' : 'prod';
  let devSchema = config.dev?.schema;
  if (flags.prod) {
    naming = 'prod';
    devSchema = undefined;
  } else if (flags.schema !== undefined) {
    naming = 'dev';
    devSchema = flags.schema;
  }
  const dev = naming === 'dev';
  const u = config.unresolved;
  const f = config.fileRel;
  const targetHint = ',\nor pass --target <name>.';
  const usesDevTarget = dev && config.dev?.target !== undefined && config.dev.target !== '';
  if (flags.target === undefined && !usesDevTarget) {
    const n = unresolvedIn(config.target, u);
    if (n) throw unsetError(f, 'target', n, targetHint);
  }
  if (dev && flags.target === undefined) {
    const n = unresolvedIn(config.dev?.target, u);
    if (n) throw unsetError(f, 'dev.target', n, targetHint);
  }
  if (dev && flags.schema === undefined) {
    const n = unresolvedIn(config.dev?.schema, u);
    if (n) throw unsetError(f, 'dev.schema', n, ',\nor pass --schema <name>.');
  }
  if (dev) {
    const n = unresolvedIn(config.dev?.database, u);
    if (n) throw unsetError(f, 'dev.database', n, '.');
  }
  checkUnresolvedDefaultsAndVars(config, flags);
  if (dev && (devSchema === undefined || devSchema === '')) {
    throw new EngineError('config', `dev mode requires a schema: set dev.schema in ${f} or pass --schema <name>`);
  }
  const target = flags.target ?? (usesDevTarget ? config.dev!.target : config.target);
  return {
    naming,
    devSchema: dev ? devSchema : undefined,
    devDatabase: dev ? config.dev?.database : undefined,
    target: target === '' ? undefined : target,
    vars: { ...config.vars, ...(flags.vars ?? {}) },
  };
}

/** The unresolved-${VAR} checks that apply in every invocation: defaults.schema/database, then vars.<key> (sorted) unless --vars supplies the key. */
export function checkUnresolvedDefaultsAndVars(config: BuildConfig, flags: Pick<SettingsFlags, 'vars'>): void {
  for (const field of ['schema', 'database'] as const) {
    const n = unresolvedIn(config.defaults[field], config.unresolved);
    if (n) throw unsetError(config.fileRel, `defaults.${field}`, n, '.');
  }
  for (const k of Object.keys(config.vars).sort()) {
    if (flags.vars && k in flags.vars) continue;
    const n = unresolvedIn(config.vars[k], config.unresolved);
    if (n) throw unsetError(config.fileRel, `vars.${k}`, n, '.');
  }
}

export const hasConfigFile = (dir: string): boolean => findConfigFiles(dir).length > 0;

/** A BuildConfig as plain JSON (its sets as sorted arrays), for the compile cache file. */
export function configToJson(c: BuildConfig): unknown {
  return { ...c, defaultsSet: [...c.defaultsSet], keys: [...c.keys], unresolved: [...c.unresolved] };
}

/** The inverse of configToJson; throws on a value of another shape. */
export function configFromJson(v: unknown): BuildConfig {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== 'object' || !Array.isArray(o.defaultsSet) || !Array.isArray(o.keys) || !Array.isArray(o.unresolved) || typeof o.defaults !== 'object' || typeof o.fileRel !== 'string') throw new Error('bad config');
  return { ...(o as unknown as BuildConfig), defaultsSet: new Set(o.defaultsSet as string[]), keys: new Set(o.keys as string[]), unresolved: new Set(o.unresolved as string[]) };
}
