/**
 * `service init [dir]`: scaffolds a build project that runs as is — the
 * build path `models/` with its `service_build.yml` (target and
 * `defaults.mode: full-refresh`), an `env.yaml` beside it declaring an
 * embedded DuckDB file, a seed and two models with data tests. Existing files
 * are never overwritten: a directory that already holds any of them is
 * refused, naming the file.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { commandFrom, schemaBase } from './invocation.js';
import type { Io } from './io.js';
import type { ParsedArgs } from './parse-command-line.js';

/**
 * Marks a YAML file for editors (the YAML language server) with its JSON
 * Schema from this package's schemas/; the placeholder is replaced by the
 * path from the written file when init writes it.
 */
const SCHEMA_LINE = (name: string) => `# yaml-language-server: $schema=${SCHEMA_MARK}${name}.schema.json`;
const SCHEMA_MARK = '@schemas/';

const FILES: Readonly<Record<string, string>> = {
  'models/service_build.yml': [
    SCHEMA_LINE('service_build'),
    '# The build project: every .sql and .csv file under models/ is a node.',
    'target: LOCAL_DUCK',
    'defaults:',
    '  mode: full-refresh',
    '',
  ].join('\n'),
  'models/env.yaml': [SCHEMA_LINE('env'), '# Connections of this project. The DuckDB path is relative to this file.', 'connections:', '  LOCAL_DUCK:', '    type: duckdb', '    instance: ../warehouse.duckdb', ''].join('\n'),
  'models/raw/customers.csv': ['id,name,city', '1,Ada,London', '2,Grace,New York', '3,Linus,Helsinki', '4,Margaret,Boston', '5,Alan,London', ''].join('\n'),
  'models/staging/stg_customers.sql': [
    '/**',
    'mode: view',
    'tests:',
    '  - unique: id',
    '  - not_null: name',
    '**/',
    "select id, trim(name) as name, city from {{ ref('customers') }}",
    '',
  ].join('\n'),
  'models/marts/customers_by_city.sql': [
    '/**',
    'tags: [daily]',
    'tests:',
    '  - expr: "sum(customers) > 0"',
    '**/',
    'select city, count(*) as customers',
    "from {{ ref('stg_customers') }}",
    'group by city',
    '',
  ].join('\n'),
};

export function initCommand(a: ParsedArgs, io: Io): number {
  const dir = resolve(a.positionals[0] ?? '.');
  const taken = Object.keys(FILES).find((name) => existsSync(join(dir, name)));
  if (taken !== undefined) {
    io.err(`fatal: ${join(dir, taken)} already exists; service init writes a new project and never overwrites files\n`);
    return 1;
  }
  try {
    for (const [name, body] of Object.entries(FILES)) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), body.replace(SCHEMA_MARK, schemaBase(join(dir, name, '..'))), { flag: 'wx' });
    }
  } catch (err) {
    io.err(`fatal: cannot write the project in ${dir}: ${(err as Error).message}\n`);
    return 1;
  }
  io.out(`Created a build project in ${dir}\n${Object.keys(FILES).map((n) => `  ${n}\n`).join('')}Run it:\n  cd ${dir} && ${commandFrom(dir)} build run models\n`);
  return 0;
}
