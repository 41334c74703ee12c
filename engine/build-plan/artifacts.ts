/**
 * dbt's run artifacts, written by `service build run|test` for dbt projects
 * and projects of our own format alike, so tools that read a dbt project's
 * `target/` folder (elementary, Dagster's dbt integration, dbt-artifacts)
 * read ours: `target/manifest.json` (dbt's manifest schema v12),
 * `target/run_results.json` (run-results v6), and per node
 * `target/compiled/<project>/<file>` (the SELECT) and
 * `target/run/<project>/<file>` (the statement the node ran). Each file is
 * written under a temporary name and renamed into place, so a reader never
 * sees half a file. docs/build-projects.md describes the fields.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CompiledNode, CompiledProject } from '../compile/compile.js';
import { loadDbtProjectFile } from '../project/dbt/dbt-project-file.js';
import { silentLogger } from '../project/dbt/silent-logger.js';
import { quoteRelation } from '../targets/relation.js';
import type { NodeTask, TestResult } from './node-task.js';

export const ARTIFACTS_DIR = 'target';
const MANIFEST_SCHEMA = 'https://schemas.getdbt.com/dbt/manifest/v12.json';
const RUN_RESULTS_SCHEMA = 'https://schemas.getdbt.com/dbt/run-results/v6.json';
/** The dbt release whose artifact schemas these files follow. */
const DBT_VERSION = '1.8.0';

/** One executed (or skipped) node of the run, with its clock times. */
export interface ArtifactRun {
  readonly task: NodeTask;
  readonly status: 'success' | 'error' | 'skipped';
  readonly message: string;
  /** Epoch milliseconds of the first dispatch; undefined when the node never ran. */
  readonly startedAt?: number;
  readonly durationMs: number;
  readonly rows: number;
  readonly tests: readonly TestResult[];
  readonly warnings: readonly string[];
  /** The SQL a model rendered when it ran, when it differs from the load's (engine/project/dbt/live-render.ts). */
  readonly compiledSql?: string;
}

export interface ArtifactInput {
  readonly compiled: CompiledProject;
  readonly selected: readonly CompiledNode[];
  readonly runs: readonly ArtifactRun[];
  readonly invocationId: string;
  readonly elapsedMs: number;
  readonly args: Readonly<Record<string, unknown>>;
  readonly threads: number;
}

/** The project's package name: dbt_project.yml's `name`, or the build folder's name. */
export function packageName(compiled: CompiledProject): string {
  if (compiled.project.format === 'dbt') {
    try {
      return loadDbtProjectFile(compiled.project.root, silentLogger).name;
    } catch {
      // the project loaded a moment ago; fall through to the folder name
    }
  }
  return basename(compiled.project.root).replace(/[^A-Za-z0-9_]/g, '_') || 'project';
}

/** dbt's resource type of a node (snapshots are models with a snapshot spec). */
function resourceType(n: CompiledNode): string {
  if (n.kind === 'model') return n.dbt?.snapshot ? 'snapshot' : 'model';
  return n.kind;
}

export const uniqueId = (pkg: string, n: CompiledNode): string => `${resourceType(n)}.${pkg}.${n.name}`;

/** What the node's SELECT is: a model's rendered SQL, a test's failing-row count query. */
export function compiledCode(n: CompiledNode): string {
  if (n.kind === 'model') return n.sql;
  if (n.kind === 'test') return n.test.kind === 'sql' ? n.test.sql : '';
  return '';
}

/** `target/compiled/<pkg>/<file>` path part: generic tests sit under their properties file, as in dbt. */
function artifactPath(n: CompiledNode): string {
  const file = n.source.file;
  if (n.kind === 'test' && !file.endsWith('.sql')) return `${file}/${n.name}.sql`;
  return n.kind === 'seed' ? file : file.endsWith('.sql') ? file : `${file}.sql`;
}

/** The statement a node ran, without our temp-table-and-swap steps. */
function runCode(n: CompiledNode, mode: string, live?: string): string {
  const sql = live ?? compiledCode(n);
  if (n.kind !== 'model') return sql;
  const rel = quoteRelation({ ...(n.source.naming.database ? { database: n.source.naming.database } : {}), schema: n.source.naming.schema, name: n.source.naming.name });
  if (mode === 'view') return `create or replace view ${rel} as (\n${sql}\n);\n`;
  if (mode === 'full-refresh') return `create table ${rel} as (\n${sql}\n);\n`;
  return `-- ${mode} into ${rel}\n${sql}\n`;
}

/** Writes `text` to `path` through a temporary sibling and a rename (`made`: folders known to exist). */
export function writeAtomic(path: string, text: string, made?: Set<string>): void {
  const dir = dirname(path);
  if (made === undefined || !made.has(dir)) {
    mkdirSync(dir, { recursive: true });
    made?.add(dir);
  }
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * A node's SQL file, written only when its text changed: most runs repeat
 * the last one's SQL, and reading a small file costs a fraction of writing
 * it through a temporary and a rename (measured on 1,000 trivial models:
 * the per-node files were ≈0.6 s of CPU a run, most of it in the
 * filesystem's create/rename work).
 */
function writeIfChanged(path: string, text: string, made: Set<string>): void {
  let old: string | undefined;
  try {
    old = readFileSync(path, 'utf8');
  } catch {
    // absent (first run) or unreadable: written below
  }
  if (old !== text) writeAtomic(path, text, made);
}

/** manifest.json, run_results.json and the compiled / run SQL of the nodes that ran. */
export function writeArtifacts(input: ArtifactInput): string {
  const dir = join(input.compiled.project.root, ARTIFACTS_DIR);
  const pkg = packageName(input.compiled);
  const generatedAt = new Date().toISOString();
  // The manifest first: discovery treats a root `target/` holding one as ours (engine/project/discover.ts).
  writeAtomic(join(dir, 'manifest.json'), JSON.stringify(manifest(input, pkg, generatedAt)));
  const byName = new Map(input.selected.map((n) => [n.name.toLowerCase(), n]));
  const made = new Set<string>();
  for (const r of input.runs) {
    const n = byName.get(r.task.name.toLowerCase());
    if (n === undefined || n.kind === 'seed') continue;
    const path = artifactPath(n);
    writeIfChanged(join(dir, 'compiled', pkg, path), `${r.compiledSql ?? compiledCode(n)}\n`, made);
    if (r.status !== 'skipped') writeIfChanged(join(dir, 'run', pkg, path), runCode(n, r.task.kind === 'model' ? r.task.mode : 'test', r.compiledSql), made);
  }
  writeAtomic(join(dir, 'run_results.json'), JSON.stringify(runResults(input, pkg, generatedAt, byName)));
  return dir;
}

function metadata(schema: string, input: ArtifactInput, generatedAt: string): Record<string, unknown> {
  return { dbt_schema_version: schema, dbt_version: DBT_VERSION, generated_at: generatedAt, invocation_id: input.invocationId, env: {} };
}

function manifest(input: ArtifactInput, pkg: string, generatedAt: string): Record<string, unknown> {
  const c = input.compiled;
  const ids = new Map(c.nodes.map((n) => [n.name.toLowerCase(), uniqueId(pkg, n)]));
  const nodes: Record<string, unknown> = {};
  const parentMap: Record<string, string[]> = {};
  const childMap: Record<string, string[]> = {};
  for (const n of c.nodes) {
    const id = uniqueId(pkg, n);
    // A model's dependencies also hold the tests `dbt build` waits for; dbt's depends_on lists what the SQL reads.
    const parents = n.dependencies.map((d) => ids.get(d.toLowerCase())).filter((d): d is string => d !== undefined && (n.kind === 'test' || !d.startsWith('test.')));
    parentMap[id] = parents;
    childMap[id] ??= [];
    for (const p of parents) (childMap[p] ??= []).push(id);
    nodes[id] = manifestNode(n, pkg, id, parents, c.target.type, c.project.format === 'dbt');
  }
  return {
    metadata: { ...metadata(MANIFEST_SCHEMA, input, generatedAt), project_name: pkg, project_id: null, user_id: null, send_anonymous_usage_stats: false, adapter_type: c.target.type },
    nodes,
    sources: {},
    macros: {},
    docs: {},
    exposures: {},
    metrics: {},
    groups: {},
    selectors: {},
    disabled: {},
    parent_map: parentMap,
    child_map: childMap,
    group_map: {},
    saved_queries: {},
    semantic_models: {},
    unit_tests: {},
  };
}

function manifestNode(n: CompiledNode, pkg: string, id: string, parents: readonly string[], adapter: string, dbt: boolean): Record<string, unknown> {
  const naming = n.source.naming;
  const file = n.source.file;
  const name = n.kind === 'test' ? n.name : naming.name;
  const mode = n.kind === 'model' ? n.config.mode : undefined;
  const materialized = n.kind === 'seed' ? 'seed' : n.kind === 'test' ? 'test' : n.dbt?.snapshot ? 'snapshot' : mode === 'full-refresh' ? 'table' : mode;
  const tags = n.kind === 'model' ? n.config.tags : n.kind === 'test' ? n.source.tags : [];
  const code = compiledCode(n);
  const relation = n.kind === 'test' ? null : quoteRelation({ ...(naming.database ? { database: naming.database } : {}), schema: naming.schema, name: naming.name });
  return {
    database: naming.database ?? null,
    schema: naming.schema,
    name: n.name,
    resource_type: resourceType(n),
    package_name: pkg,
    path: file,
    original_file_path: file,
    unique_id: id,
    // dbt's fqn leaves out the resource folder (`models/`); our own format's files sit under the build root.
    fqn: [pkg, ...file.split('/').slice(dbt ? 1 : 0, -1), n.name],
    alias: name,
    checksum: { name: 'none', checksum: '' },
    config: { enabled: true, materialized, tags, alias: name, schema: naming.schema, database: naming.database ?? null, meta: {}, ...(n.kind === 'test' && n.test.kind === 'sql' ? { severity: n.test.severity.toUpperCase(), warn_if: n.test.warnIf, error_if: n.test.errorIf } : {}) },
    tags,
    description: '',
    columns: {},
    meta: {},
    docs: { show: true, node_color: null },
    patch_path: null,
    unrendered_config: {},
    created_at: 0,
    relation_name: relation,
    raw_code: n.kind === 'model' ? n.template : '',
    language: 'sql',
    refs: [],
    sources: [],
    metrics: [],
    depends_on: { macros: [], nodes: [...parents] },
    compiled_path: n.kind === 'seed' ? null : `${ARTIFACTS_DIR}/compiled/${pkg}/${artifactPath(n)}`,
    compiled: n.kind !== 'seed',
    compiled_code: n.kind === 'seed' ? null : code,
    extra_ctes_injected: true,
    extra_ctes: [],
    ...(n.kind === 'seed' ? { root_path: null } : {}),
    ...(n.kind === 'test' ? { column_name: null, file_key_name: file.endsWith('.sql') ? null : `models.${n.source.naming.name}`, attached_node: null } : {}),
    adapter_type: adapter,
  };
}

/** dbt's result status: tests pass / warn / fail / error; other nodes success / error / skipped. */
function resultStatus(r: ArtifactRun): string {
  if (r.task.kind !== 'test') return r.status;
  if (r.status === 'skipped') return 'skipped';
  const t = r.tests.find((x) => x.status !== 'pass') ?? r.tests[0];
  if (t === undefined) return r.status === 'success' ? 'pass' : 'error';
  if (t.status === 'fail' || t.status === 'warn') return t.status;
  return t.status === 'error' ? 'error' : r.warnings.length > 0 ? 'warn' : 'pass';
}

/** Thread lanes: each node on the lowest lane free at its start, so `thread_id` reads as dbt's `Thread-<n>`. */
function threadLanes(runs: readonly ArtifactRun[], threads: number): Map<ArtifactRun, number> {
  const lanes: number[] = Array.from({ length: Math.max(1, threads) }, () => -Infinity);
  const out = new Map<ArtifactRun, number>();
  for (const r of [...runs].filter((x) => x.startedAt !== undefined).sort((a, b) => a.startedAt! - b.startedAt!)) {
    let lane = lanes.findIndex((end) => end <= r.startedAt!);
    if (lane === -1) lane = lanes.indexOf(Math.min(...lanes));
    lanes[lane] = r.startedAt! + r.durationMs;
    out.set(r, lane + 1);
  }
  return out;
}

function runResults(input: ArtifactInput, pkg: string, generatedAt: string, byName: ReadonlyMap<string, CompiledNode>): Record<string, unknown> {
  const lanes = threadLanes(input.runs, input.threads);
  const results = input.runs.map((r) => {
    const n = byName.get(r.task.name.toLowerCase());
    const started = r.startedAt !== undefined ? new Date(r.startedAt).toISOString() : undefined;
    const completed = r.startedAt !== undefined ? new Date(r.startedAt + r.durationMs).toISOString() : undefined;
    const failures = r.task.kind === 'test' ? r.tests.reduce((a, t) => a + (t.violations ?? 0), 0) : null;
    const status = resultStatus(r);
    return {
      status,
      timing: started === undefined ? [] : [{ name: 'compile', started_at: started, completed_at: started }, { name: 'execute', started_at: started, completed_at: completed }],
      thread_id: lanes.has(r) ? `Thread-${lanes.get(r)}` : 'main',
      execution_time: r.durationMs / 1000,
      adapter_response: r.status === 'skipped' ? {} : { _message: r.task.kind === 'test' ? `${status.toUpperCase()} ${failures}` : `OK ${r.rows}`, rows_affected: r.rows },
      message: r.status === 'error' ? r.message : r.status === 'skipped' ? null : r.task.kind === 'test' ? (status === 'pass' ? null : `Got ${failures} result${failures === 1 ? '' : 's'}, configured to ${status === 'warn' ? 'warn' : 'fail'} if != 0`) : `OK ${r.rows}`,
      failures,
      unique_id: n ? uniqueId(pkg, n) : `${r.task.kind}.${pkg}.${r.task.name}`,
      compiled: n !== undefined && n.kind !== 'seed',
      compiled_code: n && n.kind !== 'seed' ? (r.compiledSql ?? compiledCode(n)) : null,
      relation_name: r.task.kind === 'test' ? null : quoteRelation(r.task.relation),
      batch_results: null,
    };
  });
  return { metadata: metadata(RUN_RESULTS_SCHEMA, input, generatedAt), results, elapsed_time: input.elapsedMs / 1000, args: input.args };
}
