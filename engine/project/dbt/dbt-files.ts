/**
 * The files of a dbt project, by folder: models (`.sql`; `.py` is refused),
 * seeds (`.csv`), macros, tests (singular `.sql` and `{% test %}` blocks),
 * snapshots, and the properties files (`.yml`) in any of them. A file in
 * one of these folders that nothing uses gets a warning naming it.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DbtProjectFile } from './dbt-project-file.js';

export interface DbtFile {
  readonly abs: string;
  /** Relative to the project directory. */
  readonly file: string;
  /** Relative to its resource folder (`staging/stg_orders.sql`). */
  readonly rel: string;
  /** File name without extension. */
  readonly stem: string;
}

export interface DbtFiles {
  readonly models: DbtFile[];
  readonly seeds: DbtFile[];
  readonly macros: DbtFile[];
  readonly tests: DbtFile[];
  readonly snapshots: DbtFile[];
  readonly properties: DbtFile[];
}

function walk(root: string, base: string, rel: string, out: DbtFile[]): void {
  let names: string[];
  try {
    names = readdirSync(join(root, base, rel));
  } catch {
    return;
  }
  for (const n of names.sort()) {
    if (n.startsWith('.')) continue;
    const r = rel === '' ? n : `${rel}/${n}`;
    const abs = join(root, base, r);
    if (statSync(abs).isDirectory()) walk(root, base, r, out);
    else out.push({ abs, file: posix.join(base, r), rel: r, stem: n.replace(/\.[^.]*$/, '') });
  }
}

const ext = (f: DbtFile) => (f.file.includes('.') ? f.file.slice(f.file.lastIndexOf('.') + 1).toLowerCase() : '');
const isYaml = (f: DbtFile) => ext(f) === 'yml' || ext(f) === 'yaml';

export function findDbtFiles(root: string, pf: DbtProjectFile, logger: Logger): DbtFiles {
  const files: DbtFiles = { models: [], seeds: [], macros: [], tests: [], snapshots: [], properties: [] };
  const unused = (f: DbtFile, what: string) => logger.log('warn', `${f.file}: not used (${what})`);
  const each = (dirs: readonly string[], fn: (f: DbtFile) => void) => {
    for (const d of dirs) {
      const found: DbtFile[] = [];
      walk(root, d, '', found);
      found.forEach(fn);
    }
  };
  each(pf.modelPaths, (f) => {
    if (ext(f) === 'sql') files.models.push(f);
    else if (ext(f) === 'py') throw new EngineError('load', `${f.file}: Python models are not supported by service build; write the model in SQL`);
    else if (isYaml(f)) files.properties.push(f);
    else if (ext(f) !== 'md') unused(f, 'model folders hold .sql models, .yml properties and .md docs');
  });
  each(pf.seedPaths, (f) => {
    if (ext(f) === 'csv') files.seeds.push(f);
    else if (isYaml(f)) files.properties.push(f);
    else unused(f, 'dbt seeds are .csv files');
  });
  each(pf.macroPaths, (f) => {
    if (ext(f) === 'sql') files.macros.push(f);
    else if (isYaml(f)) files.properties.push(f);
    else if (ext(f) !== 'md') unused(f, 'macro folders hold .sql macro files');
  });
  each(pf.testPaths, (f) => {
    // `<test path>/fixtures/` holds unit-test fixtures (dbt reads them only for unit tests, which we do not run).
    if (f.rel === 'fixtures' || f.rel.startsWith('fixtures/')) logger.log('debug', `${f.file}: a unit-test fixture (unit tests are not run)`);
    else if (ext(f) === 'sql') files.tests.push(f);
    else if (isYaml(f)) files.properties.push(f);
    else unused(f, 'test folders hold .sql tests');
  });
  each(pf.snapshotPaths, (f) => {
    if (ext(f) === 'sql') files.snapshots.push(f);
    else if (isYaml(f)) files.properties.push(f);
    else unused(f, 'snapshot folders hold .sql snapshots');
  });
  return files;
}
