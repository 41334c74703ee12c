/**
 * Properties files (`*.yml` in the resource folders): models', seeds' and
 * snapshots' `config:`, `columns:` with their tests, model-level tests, and
 * `sources:`. Only the shape is read here; tests become nodes in
 * dbt-tests.ts and sources resolve in load-dbt.ts.
 */
import { readFileSync } from 'node:fs';
import { parseYaml } from '../../yaml-lib.js';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { yamlErrorDetail } from '../yaml-error.js';

export interface TestDecl {
  /** `unique`, `accepted_values`, `dbt_utils.expression_is_true`, a custom generic test's name. */
  readonly test: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly column?: string;
  /** The properties file that declared it. */
  readonly file: string;
}

export interface ColumnProps {
  readonly name: string;
  readonly description?: string;
}

export interface ResourceProps {
  readonly name: string;
  readonly file: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly description?: string;
  readonly columns: readonly ColumnProps[];
  readonly tests: readonly TestDecl[];
}

export interface SourceTableProps {
  readonly source: string;
  readonly name: string;
  readonly identifier: string;
  readonly schema: string;
  readonly database?: string;
  readonly loadedAtField?: string;
  readonly freshness?: Readonly<Record<string, unknown>> | null;
  readonly file: string;
  readonly tests: readonly TestDecl[];
}

export interface Properties {
  readonly models: Map<string, ResourceProps>;
  readonly seeds: Map<string, ResourceProps>;
  readonly snapshots: Map<string, ResourceProps>;
  readonly sources: SourceTableProps[];
}

const KNOWN_TOP = new Set(['version', 'models', 'seeds', 'snapshots', 'sources', 'macros', 'analyses', 'exposures', 'metrics', 'semantic_models', 'saved_queries', 'groups', 'unit_tests']);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** dbt ≥ 1.10 writes a test's arguments under `arguments:` (beside `config:`); older files write them inline. */
function withArguments(args: Record<string, unknown>): Record<string, unknown> {
  if (!isMap(args.arguments)) return args;
  const { arguments: inner, ...rest } = args;
  return { ...rest, ...inner };
}

/** One `tests:`/`data_tests:` list entry: `unique`, `{accepted_values: {...}}`, `{name: x, test_name: y, ...}`. */
function testDecls(list: unknown, file: string, where: string, column?: string): TestDecl[] {
  return asList(list).map((entry) => testDecl(entry, file, where, column)).map((d) => ({ ...d, args: withArguments(d.args as Record<string, unknown>) }));
}

function testDecl(entry: unknown, file: string, where: string, column?: string): TestDecl {
  if (typeof entry === 'string') return { test: entry, args: {}, file, ...(column ? { column } : {}) };
  if (isMap(entry)) {
    if (typeof entry.test_name === 'string') {
      const { test_name, ...rest } = entry;
      return { test: test_name, args: rest, file, ...(column ? { column } : {}) };
    }
    const keys = Object.keys(entry);
    if (keys.length === 1) {
      const args = entry[keys[0]!];
      return { test: keys[0]!, args: isMap(args) ? args : {}, file, ...(column ? { column } : {}) };
    }
  }
  throw new EngineError('load', `${file}: ${where}: a test entry must be a test name or a mapping of one test name to its arguments`);
}

function resource(e: Record<string, unknown>, file: string, kind: string): ResourceProps {
  const name = String(e.name);
  const columns = asList(e.columns).filter(isMap);
  const tests = [
    ...testDecls(e.tests ?? e.data_tests, file, `${kind} '${name}'`),
    ...columns.flatMap((c) => testDecls(c.tests ?? c.data_tests, file, `${kind} '${name}' column '${String(c.name)}'`, String(c.name))),
  ];
  return {
    name,
    file,
    config: isMap(e.config) ? e.config : {},
    ...(typeof e.description === 'string' ? { description: e.description } : {}),
    columns: columns.map((c) => ({ name: String(c.name), ...(typeof c.description === 'string' ? { description: c.description } : {}) })),
    tests,
  };
}

export function emptyProperties(): Properties {
  return { models: new Map(), seeds: new Map(), snapshots: new Map(), sources: [] };
}

/** Adds one properties file (`file`: project-relative, for messages). */
export function readProperties(into: Properties, abs: string, file: string, logger: Logger): void {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(abs, 'utf8'));
  } catch (err) {
    throw new EngineError('load', `could not parse ${file}: ${yamlErrorDetail(err)}`);
  }
  if (doc === null || doc === undefined) return;
  if (!isMap(doc)) throw new EngineError('load', `${file}: expected a mapping at the top level`);
  for (const k of Object.keys(doc)) {
    if (!KNOWN_TOP.has(k)) logger.log('warn', `${file}: key '${k}' is not supported and has no effect`);
    else if (['exposures', 'metrics', 'semantic_models', 'saved_queries', 'unit_tests'].includes(k)) logger.log('warn', `${file}: '${k}' are not supported by service build and are not run`);
  }
  for (const [key, map] of [['models', into.models], ['seeds', into.seeds], ['snapshots', into.snapshots]] as const) {
    for (const e of asList(doc[key])) {
      if (!isMap(e) || typeof e.name !== 'string') throw new EngineError('load', `${file}: every entry under ${key}: needs a name`);
      const prev = map.get(e.name.toLowerCase());
      if (prev) throw new EngineError('load', `${file}: ${key.slice(0, -1)} '${e.name}' is described twice (also in ${prev.file})`);
      map.set(e.name.toLowerCase(), resource(e, file, key.slice(0, -1)));
    }
  }
  for (const s of asList(doc.sources)) {
    if (!isMap(s) || typeof s.name !== 'string') throw new EngineError('load', `${file}: every source needs a name`);
    for (const t of asList(s.tables)) {
      if (!isMap(t) || typeof t.name !== 'string') throw new EngineError('load', `${file}: source '${s.name}': every table needs a name`);
      const columns = asList(t.columns).filter(isMap);
      const freshness = 'freshness' in t ? (t.freshness as Record<string, unknown> | null) : ((s.freshness as Record<string, unknown> | undefined) ?? undefined);
      const loaded = (t.loaded_at_field ?? s.loaded_at_field) as string | undefined;
      into.sources.push({
        source: s.name,
        name: t.name,
        identifier: typeof t.identifier === 'string' ? t.identifier : t.name,
        schema: typeof s.schema === 'string' ? s.schema : s.name,
        ...(typeof s.database === 'string' ? { database: s.database } : {}),
        ...(loaded ? { loadedAtField: loaded } : {}),
        ...(freshness !== undefined ? { freshness } : {}),
        file,
        tests: [
          ...testDecls(t.tests ?? t.data_tests, file, `source '${s.name}.${t.name}'`),
          ...columns.flatMap((c) => testDecls(c.tests ?? c.data_tests, file, `source '${s.name}.${t.name}' column '${String(c.name)}'`, String(c.name))),
        ],
      });
    }
  }
}
