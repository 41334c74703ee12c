/**
 * Drives `service build …` in-process for the build acceptance tests: a fresh
 * project directory per test, the CLI's stdout/stderr captured as strings,
 * and environment variables set and restored around a call.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { main } from '../../cli/main.js';

// Every temp dir made here is removed when the test process exits.
const made: string[] = [];
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh, empty temp dir (`<tmp>/<prefix>XXXXXX`), removed at exit. */
export function tempDir(prefix = 'svc-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

// No developer's ~/.service/env.yaml may leak into a test: point the home dir at an empty folder.
process.env.SERVICE_HOME_DIR = tempDir('svc-home-');
delete process.env.SERVICE_LOGGING;

export interface CliResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `service <argv…>` and captures both streams. */
export async function cli(...argv: string[]): Promise<CliResult> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** `service build <argv…>`. */
export const build = (...argv: string[]) => cli('build', ...argv);

/** The stderr lines without the log time prefix (`3:04PM WRN msg` → `WRN msg`). */
export function logLines(err: string): string[] {
  return err
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^\d{1,2}:\d{2}[AP]M /, ''));
}

/** Writes `files` (relative path → text) into a fresh temp dir and returns its absolute path. */
export function project(files: Readonly<Record<string, string>>): string {
  const dir = tempDir();
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [rel, text] of Object.entries(files)) {
    const abs = join(dir, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
  }
}

/** A project-local DuckDB connection `DUCK` (file `wh.duckdb` beside the config). */
export const DUCK_ENV = 'connections:\n  DUCK:\n    type: duckdb\n    instance: wh.duckdb\n';

/** Project with `target: DUCK`, a local DuckDB connection and `files`. */
export function duckProject(files: Readonly<Record<string, string>>, config = 'target: DUCK\n'): string {
  return project({ 'service_build.yml': config, 'env.yaml': DUCK_ENV, ...files });
}

/** list/compile must never open the warehouse. */
export const warehouseCreated = (dir: string) => existsSync(join(dir, 'wh.duckdb'));

/** Runs `fn` with the given env vars set (undefined = unset) and restores them afterwards. */
export async function withEnv<T>(vars: Readonly<Record<string, string | undefined>>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Readonly<Record<string, string | undefined>>) => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

/** Parsed `--json` stdout; fails the test when stdout is not exactly one JSON line. */
export function json(r: CliResult): unknown {
  if (!r.out.endsWith('\n') || r.out.indexOf('\n') !== r.out.length - 1) throw new Error(`stdout is not one JSON line: ${JSON.stringify(r.out)}\nstderr: ${r.err}`);
  return JSON.parse(r.out);
}

/** Names from a `list --json` array. */
export function listNames(r: CliResult): string[] {
  return (json(r) as { name: string }[]).map((e) => e.name);
}

/** One node of a `compile --json` payload by name. */
export function compiledNode(r: CliResult, name: string): Record<string, unknown> {
  const nodes = (json(r) as { nodes: Record<string, unknown>[] }).nodes;
  const n = nodes.find((x) => x.name === name);
  if (!n) throw new Error(`node ${name} not in compile output: ${r.out}`);
  return n;
}

/** The `fatal: …` text of a failed command (stderr, without the prefix and trailing newline). */
export function fatal(r: CliResult): string {
  const i = r.err.indexOf('fatal: ');
  if (i < 0) throw new Error(`no fatal line on stderr (exit ${r.code}): ${r.err}`);
  return r.err.slice(i + 'fatal: '.length).replace(/\n$/, '');
}
