/**
 * Generates the dbt-style projects of the compile benchmark: N models over
 * the same seeded random DAG as generate-project.ts, each a `{{ config() }}`
 * call, `{{ ref() }}`s and a project macro — written either as a plain
 * project (service_build.yml, models in folders) or as a dbt project
 * (dbt_project.yml, profiles.yml, models/, macros/). With `dbtUtils`, every
 * model also calls dbt_utils macros (generate_surrogate_key, safe_add,
 * safe_divide) and the package is copied from the dbt corpus into
 * dbt_packages/dbt_utils, as `dbt deps` installs it.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomDag } from './lib/random-dag.js';
import { FOLDERS, folderOf, modelName } from './generate-project.js';

export type Flavour = 'plain' | 'dbt';

export interface DbtStyleOptions {
  readonly flavour: Flavour;
  /** The dbt_utils package folder to copy into dbt_packages/ (dbt flavour only); its models call its macros. */
  readonly dbtUtils?: string;
}

function modelText(i: number, n: number, parents: readonly number[], dbtUtils: boolean): string {
  const lines = [`{{ config(materialized='${i % 3 === 0 ? 'view' : 'table'}', tags=['t${i % 7}']) }}`];
  const utils = dbtUtils ? [`, {{ dbt_utils.generate_surrogate_key(['r0.id', 'r0.amount']) }} as sk`, `, {{ dbt_utils.safe_add(['r0.id', 'r0.amount']) }} as total`, `, {{ dbt_utils.safe_divide('r0.amount', 'r0.id') }} as ratio`] : [];
  if (i === 0) return [...lines, 'select 1 as id, 10 as amount', ''].join('\n');
  lines.push(`select r0.id, {{ double('r0.amount') }} as amount`, ...utils);
  parents.forEach((j, k) => lines.push(k === 0 ? `from {{ ref('${modelName(j, n)}') }} r0` : `join {{ ref('${modelName(j, n)}') }} r${k} on r${k}.id = r0.id`));
  return [...lines, ''].join('\n');
}

const MACRO = '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n';

/** Writes the project into `dir` (emptied first); returns its directory. */
export function generateDbtStyleProject(dir: string, models: number, o: DbtStyleOptions, seed = 1): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const modelsDir = o.flavour === 'dbt' ? join(dir, 'models') : dir;
  if (o.flavour === 'dbt') {
    writeFileSync(join(dir, 'dbt_project.yml'), "name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\nmodel-paths: [models]\nmacro-paths: [macros]\n");
    writeFileSync(join(dir, 'profiles.yml'), `bench:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: ${join(dir, 'bench.duckdb')}\n      schema: main\n`);
    mkdirSync(join(dir, 'macros'));
    writeFileSync(join(dir, 'macros', 'helpers.sql'), MACRO);
    if (o.dbtUtils !== undefined) {
      writeFileSync(join(dir, 'packages.yml'), 'packages:\n  - package: dbt-labs/dbt_utils\n    version: [">=1.0.0", "<2.0.0"]\n');
      const into = join(dir, 'dbt_packages', 'dbt_utils');
      mkdirSync(into, { recursive: true });
      cpSync(join(o.dbtUtils, 'dbt_project.yml'), join(into, 'dbt_project.yml'));
      cpSync(join(o.dbtUtils, 'macros'), join(into, 'macros'), { recursive: true });
    }
  } else {
    writeFileSync(join(dir, 'service_build.yml'), 'target: BENCH\n');
    writeFileSync(join(dir, 'helpers.macros.sql'), MACRO);
  }
  for (let f = 0; f < FOLDERS; f++) mkdirSync(join(modelsDir, `layer${f}`), { recursive: true });
  const deps = randomDag(models, seed);
  for (let i = 0; i < models; i++) writeFileSync(join(modelsDir, folderOf(i), `${modelName(i, models)}.sql`), modelText(i, models, deps[i]!, o.dbtUtils !== undefined));
  return dir;
}
