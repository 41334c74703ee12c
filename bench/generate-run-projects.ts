/**
 * Projects that `build run` executes in the benchmarks:
 *
 * - trivial: N models of `select 1 as id` plus 1–3 refs (a seeded random DAG
 *   in 4 schemas); every table has one row, so the database work per model is
 *   the smallest a full-refresh can be and what remains is orchestration.
 * - shapes: wide (1 root, N children), deep (a chain of N) and diamond
 *   (stacked fan-out/fan-in stages) where every model sleeps in the database
 *   (`pg_sleep`), so a perfect scheduler's wall time is known in advance.
 *
 * Each generator returns the DAG as index lists, which the baselines and the
 * ideal schedule use.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { between, prng, randomDag } from './lib/random-dag.js';

export interface RunProject {
  readonly dir: string;
  readonly schemas: readonly string[];
  /** Model names in generation order (a topological order). */
  readonly names: readonly string[];
  /** deps[i]: indexes of i's parents. */
  readonly deps: readonly (readonly number[])[];
}

function writeProject(dir: string, target: string, files: readonly { folder: string; name: string; sql: string }[]): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'service_build.yml'), `target: ${target}\n`);
  for (const folder of new Set(files.map((f) => f.folder))) mkdirSync(join(dir, folder), { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.folder, `${f.name}.sql`), f.sql);
}

const refList = (names: readonly string[], parents: readonly number[]) => parents.map((p, k) => `{{ ref('${names[p]}') }} r${k + 1}`);

/** N trivial models; roughly one in twenty is a root (no refs). */
export function generateTrivialProject(dir: string, n: number, target: string, seed = 7): RunProject {
  const rand = prng(seed);
  const names = Array.from({ length: n }, (_, i) => `t${String(i).padStart(4, '0')}`);
  const deps = randomDag(n, seed).map((d, i) => (i > 0 && rand() < 0.05 ? [] : d));
  const schemas = ['s0', 's1', 's2', 's3'];
  const files = names.map((name, i) => ({
    folder: schemas[between(rand, 0, schemas.length - 1)]!,
    name,
    sql: deps[i]!.length === 0 ? 'select 1 as id\n' : `select 1 as id\nfrom ${refList(names, deps[i]!).join(', ')}\n`,
  }));
  writeProject(dir, target, files);
  return { dir, schemas, names, deps };
}

export type Shape = 'wide' | 'deep' | 'diamond';

/**
 * The DAG of a shape with about `n` models: wide = 1 + n, deep = n, diamond =
 * a root, then stages of `width` parallel models joined by one
 * (1 + stages × (width + 1) ≤ n).
 */
export function shapeDeps(shape: Shape, n: number, width = 32): number[][] {
  switch (shape) {
    case 'wide':
      return [[], ...Array.from({ length: n }, () => [0])];
    case 'deep':
      return Array.from({ length: n }, (_, i) => (i === 0 ? [] : [i - 1]));
    case 'diamond': {
      const deps: number[][] = [[]];
      let join = 0;
      const stages = Math.max(1, Math.floor((n - 1) / (width + 1)));
      for (let s = 0; s < stages; s++) {
        const middle: number[] = [];
        for (let k = 0; k < width; k++) {
          middle.push(deps.length);
          deps.push([join]);
        }
        join = deps.length;
        deps.push(middle);
      }
      return deps;
    }
  }
}

/**
 * How a sleeping model names its parents: `join` reads them in its FROM
 * clause (the database joins them), `depends_on` names them on
 * `-- depends_on: {{ ref(…) }}` lines (the same edges, no join).
 */
export type ParentRefs = 'join' | 'depends_on';

/** A project of the DAG `deps` where each model spends `sleepSeconds` in `pg_sleep` (PostgreSQL only); models are `<prefix>_000`…. */
export function generateSleepProject(dir: string, prefix: string, deps: readonly (readonly number[])[], sleepSeconds: number, target: string, parents: ParentRefs = 'join'): RunProject {
  const names = deps.map((_, i) => `${prefix}_${String(i).padStart(3, '0')}`);
  const sleep = `pg_sleep(${sleepSeconds}) s`;
  const files = names.map((name, i) => ({
    folder: 'dag',
    name,
    sql:
      parents === 'join'
        ? `select 1 as id\nfrom ${[sleep, ...refList(names, deps[i]!)].join(', ')}\n`
        : `${deps[i]!.map((p) => `-- depends_on: {{ ref('${names[p]}') }}\n`).join('')}select 1 as id from ${sleep}\n`,
  }));
  writeProject(dir, target, files);
  return { dir, schemas: ['dag'], names, deps };
}

/** A shape project where each model spends `sleepSeconds` in `pg_sleep` (PostgreSQL only). */
export function generateShapeProject(dir: string, shape: Shape, n: number, sleepSeconds: number, target: string, width?: number): RunProject {
  return generateSleepProject(dir, shape, shapeDeps(shape, n, width), sleepSeconds, target);
}
