/**
 * Generates the synthetic build project of the compile-throughput benchmark:
 * N models in 10 folders (schemas) over a seeded random DAG where every model
 * selects from 1–3 earlier models. References mix `{{ ref() }}` (most),
 * bare prod names (found by table-reference rewriting) and `@name`; every
 * model calls a project macro and reads a var; tags come from YAML
 * front-matter, `-- {…}` front-matter or a `config()` call; every 50th model
 * is incremental (alternating service style and dbt style). Model 0 reads a
 * CSV seed. The same seed gives byte-identical projects. Usage:
 *   node --import tsx bench/generate-project.ts <dir> [models=10000] [seed=1]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomDag } from './lib/random-dag.js';

export const FOLDERS = 10;
export const INCREMENTAL_EVERY = 50;

export interface GeneratedProject {
  readonly dir: string;
  readonly models: number;
  /** Schema (folder) names. */
  readonly schemas: readonly string[];
}

export function modelName(i: number, n: number): string {
  return `m${String(i).padStart(Math.max(5, String(n - 1).length), '0')}`;
}

export const folderOf = (i: number): string => `layer${i % FOLDERS}`;

/** The model's file text (front-matter, then the templated query). */
function modelText(i: number, n: number, parents: readonly number[]): string {
  const name = (j: number) => modelName(j, n);
  const incremental = i > 0 && i % INCREMENTAL_EVERY === 0;
  const head: string[] = [];
  if (incremental) {
    head.push(`/**\nmode: incremental\nunique_key: id\nupdate_key: id\ntags: [incr, t${i % 7}]\n**/`);
  } else if (i % 3 === 0) {
    head.push(`/**\nmode: ${i % 2 === 0 ? 'view' : 'full-refresh'}\ntags: [t${i % 7}]\n**/`);
  } else if (i % 3 === 1 && i % 2 === 0) {
    head.push(`-- {tags: [t${i % 7}, daily]}`);
  } else {
    head.push(`{{ config(tags=['t${i % 7}']) }}`);
  }
  const refText = (j: number, k: number) => {
    const form = (i + k) % 4;
    if (form === 2) return `${folderOf(j)}.${name(j)}`; // bare prod name: table-reference rewriting
    if (form === 3) return `@${name(j)}`;
    return `{{ ref('${name(j)}') }}`;
  };
  const from: string[] = [];
  if (i === 0) from.push("from {{ ref('seed_base') }} r0");
  else {
    // Incremental models read one parent, so `incremental_where_cond()` stays unambiguous.
    const used = incremental ? parents.slice(0, 1) : parents;
    used.forEach((j, k) => from.push(k === 0 ? `from ${refText(j, k)} r0` : `join ${refText(j, k)} r${k} on r${k}.id = r0.id`));
  }
  const where: string[] = [];
  if (incremental && (i / INCREMENTAL_EVERY) % 2 === 1) where.push('where {{ incremental_where_cond() }}');
  else if (incremental) where.push('{% if is_incremental() %}where r0.id > (select max(id) from {{ this }}){% endif %}');
  return [...head, `select r0.id, {{ double('r0.amount') }} as amount`, ...from, ...where, 'limit {{ limit_n }}', ''].join('\n');
}

export function generateProject(dir: string, models: number, seed = 1): GeneratedProject {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'service_build.yml'), 'target: BENCH\nvars:\n  limit_n: 100\n');
  writeFileSync(join(dir, 'seed_base.csv'), 'id,amount\n1,10\n2,20\n');
  writeFileSync(join(dir, 'helpers.macros.sql'), '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n');
  const schemas = Array.from({ length: FOLDERS }, (_, f) => `layer${f}`);
  for (const s of schemas) mkdirSync(join(dir, s), { recursive: true });
  const deps = randomDag(models, seed);
  for (let i = 0; i < models; i++) writeFileSync(join(dir, folderOf(i), `${modelName(i, models)}.sql`), modelText(i, models, deps[i]!));
  return { dir, models, schemas };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: generate-project.ts <dir> [models=10000] [seed=1]\n');
    process.exit(2);
  }
  const n = Number(process.argv[3] ?? 10000);
  const seed = Number(process.argv[4] ?? 1);
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(seed)) {
    process.stderr.write(`models must be a positive integer and seed an integer, got "${process.argv[3]}" "${process.argv[4] ?? ''}"\n`);
    process.exit(2);
  }
  generateProject(dir, n, seed);
  process.stdout.write(`generated ${n} models in ${dir}\n`);
}
