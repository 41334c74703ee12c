/**
 * JSON Schemas of the user's files: schemas/ is generated from
 * the shape structs and must be current; every example file names its
 * schema on a `yaml-language-server` line and passes both the schema and
 * the loader; a corpus of good and bad files gets the same verdict from the
 * schema (ajv) and from the loader.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import { readEnvFile } from '../engine/connections/load-connections.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';
import { parseConfig } from '../engine/project/config.js';
import { FILE_SCHEMAS, renderSchema } from '../engine/schemas/file-schemas.js';
import { tempDir } from './helpers/build-cli.js';

const root = join(import.meta.dirname, '..');
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map(FILE_SCHEMAS.map((f) => [f.file, ajv.compile(JSON.parse(readFileSync(join(root, 'schemas', f.file), 'utf8')))]));
/** Warnings of the last service_build.yml the loader read. */
let warned: string[] = [];
const quiet = { log: (level: string, msg: string) => void (level === 'warn' && warned.push(msg)), enabled: () => false };

/** The loader's verdict on `text` as a file of the schema's kind: '' when it loads, else its first complaint. */
function loaderVerdict(schema: string, text: string): string {
  if (schema === 'service_build.schema.json') {
    warned = [];
    try {
      parseConfig(text, '/tmp/service_build.yml', 'service_build.yml', { logger: quiet } as Parameters<typeof parseConfig>[3]);
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  }
  if (schema === 'env.schema.json') {
    const file = join(tempDir('svc-schema-'), 'env.yaml');
    writeFileSync(file, text);
    return readEnvFile(file, 'project', dirname(file)).problems.map((p) => p.message).join('; ');
  }
  const as = schema.replace('.schema.json', '') as 'replication' | 'pipeline' | 'monitor';
  const r = validateJobFile('job.yaml', text, { fileExists: () => true, connectionKind: () => undefined }, { as });
  return r.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
}

function schemaVerdict(schema: string, text: string): string {
  const validate = validators.get(schema)!;
  return validate(parseYaml(text) ?? {}) ? '' : ajv.errorsText(validate.errors);
}

test('schemas/ is what `npm run schemas` writes from the shape structs', () => {
  for (const f of FILE_SCHEMAS) {
    assert.equal(readFileSync(join(root, 'schemas', f.file), 'utf8'), renderSchema(f), `schemas/${f.file} is stale: run \`npm run schemas\``);
  }
  assert.deepEqual(readdirSync(join(root, 'schemas')).sort(), FILE_SCHEMAS.map((f) => f.file).sort(), 'schemas/ holds exactly the generated files');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.ok(pkg.files.includes('schemas/'), 'the package ships schemas/');
});

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []));
}

test('every example names its schema on its first line and passes both the schema and the loader', () => {
  const files = yamlFiles(join(root, 'examples'));
  assert.ok(files.length >= 5, files.join(', '));
  const kinds = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const m = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
    assert.ok(m, `${relative(root, file)} lacks the yaml-language-server line`);
    const target = resolve(dirname(file), m[1]!);
    assert.equal(dirname(target), join(root, 'schemas'), `${relative(root, file)}: ${m[1]} is not in schemas/`);
    const schema = basename(target);
    assert.ok(validators.has(schema), `${relative(root, file)}: ${m[1]} does not exist`);
    kinds.add(schema);
    assert.deepEqual([schemaVerdict(schema, text), loaderVerdict(schema, text)], ['', ''], relative(root, file));
  }
  assert.deepEqual([...kinds].sort(), FILE_SCHEMAS.map((f) => f.file).sort(), 'an example of every kind');
});

/**
 * [schema, file text, valid?] — the schema and the loader must both give this
 * verdict; 'flagged': a key the loader ignores, naming it on a warning (in
 * service_build.yml) or not reading it, which the schema refuses so an editor
 * marks the typo.
 */
const CORPUS: readonly [string, string, boolean | 'flagged'][] = [
  ['service_build.schema.json', 'target: DUCK\nvars: {a: 1}\ndefaults: {mode: table, tags: [daily], unique_key: [id, day]}\n', true],
  ['service_build.schema.json', 'target: DUCK\nsomething_else: 1\n', 'flagged'],
  ['service_build.schema.json', 'targt: DUCK\n', 'flagged'],
  ['service_build.schema.json', 'target: DUCK\ndefaults: {mod: table}\n', 'flagged'],
  ['service_build.schema.json', 'target: DUCK\ndefaults: {mode: tabel}\n', false],
  ['service_build.schema.json', 'target: DUCK\ndefaults: {merge_strategy: upsert}\n', false],
  ['env.schema.json', 'connections:\n  PG: {type: postgres, user: me, ulr: "postgresql://x"}\n', 'flagged'],
  ['env.schema.json', 'conections:\n  PG: {type: postgres, user: me}\n', 'flagged'],
  ['service_build.schema.json', 'dbt_project: {models_path: models}\ndev: {schema: dev_me}\n', true],
  ['service_build.schema.json', 'target: 5\n', false],
  ['service_build.schema.json', 'target: ~\n', false],
  ['service_build.schema.json', 'vars: [1, 2]\n', false],
  ['service_build.schema.json', 'defaults: {tags: daily}\n', false],
  ['service_build.schema.json', 'defaults: {enabled: "yes"}\n', false],
  ['service_build.schema.json', 'dbt_project: maybe\n', false],
  ['env.schema.json', 'connections:\n  PG: {type: postgres, user: me, port: "5433"}\n  DUCK: {type: duckdb, instance: x.duckdb}\nenv: {A: 1, B: ~}\n', true],
  ['env.schema.json', 'connections:\n  PG: {url: "postgresql://me@localhost/db"}\n  OTHER: {type: mysql}\n', true],
  ['env.schema.json', 'connections: [PG]\n', false],
  ['env.schema.json', 'connections:\n  1PG: {type: duckdb, instance: x.duckdb}\n', false],
  ['env.schema.json', 'connections:\n  PG: 5\n', false],
  ['env.schema.json', 'connections:\n  PG: {type: postgres, user: me, port: abc}\n', false],
  ['env.schema.json', 'connections:\n  PG: {host: localhost}\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: "main.{stream_table}"}\nstreams:\n  public.t:\n  public.u: {object: main.u, select: [a, b], source_options: {limit: 5}}\n', true],
  ['replication.schema.json', 'source: A\ndefaults: {object: o.t}\nstreams:\n  public.t:\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nschedule: daily\nstreams:\n  public.t:\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams: [public.t]\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams:\n  public.t: {mode: fast}\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams:\n  public.t: {source_options: {format: xml}}\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams:\n  public.t: {primary_key: 5}\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams:\n  public.t: {select: a}\n', false],
  ['replication.schema.json', 'source: A\ntarget: B\ndefaults: {object: o.t}\nstreams:\n  public.t: {colour: red}\n', false],
  ['monitor.schema.json', 'connection: W\nobjects:\n  s.t: {columns: {a: [null_count, min_max]}}\n  "s.*":\n', true],
  ['monitor.schema.json', 'objects:\n  s.t:\n', false],
  ['monitor.schema.json', 'connection: W\nobjects:\n  s.t: {columns: {a: [median]}}\n', false],
  ['monitor.schema.json', 'connection: W\nobjects:\n  s.t: {freshness_column: ts, freshness_threshold: 5}\n', false],
  ['monitor.schema.json', 'connection: W\nobjects:\n  s.t: {row_count: "yes"}\n', false],
  ['monitor.schema.json', 'connection: W\nalerts: on\nobjects:\n  s.t:\n', false],
  ['pipeline.schema.json', 'steps:\n  - log: hello\n  - type: http\n    url: https://example.com\n    method: POST\n  - id: g\n    type: group\n    steps:\n      - log: inner\n', true],
  ['pipeline.schema.json', 'env: {A: 1}\n', false],
  ['pipeline.schema.json', 'steps: {a: 1}\n', false],
  ['pipeline.schema.json', 'steps:\n  - log: hi\n    url: https://example.com\n', false],
  ['pipeline.schema.json', 'steps:\n  - log: hi\n    on_failure: explode\n', false],
  ['pipeline.schema.json', 'steps:\n  - type: teleport\n', false],
  ['pipeline.schema.json', 'steps:\n  - log: hi\n    level: loud\n', false],
  ['pipeline.schema.json', 'schedule: daily\nsteps:\n  - log: hi\n', false],
];

test('the schema and the loader agree on a corpus of good and bad files', () => {
  for (const [schema, text, verdict] of CORPUS) {
    const bySchema = schemaVerdict(schema, text);
    const byLoader = loaderVerdict(schema, text);
    const valid = verdict === true;
    assert.equal(bySchema === '', valid, `${schema} ${JSON.stringify(text)}: schema says ${bySchema || 'valid'}`);
    assert.equal(byLoader === '', verdict !== false, `${schema} ${JSON.stringify(text)}: loader says ${byLoader || 'valid'}`);
    if (verdict === 'flagged' && schema === 'service_build.schema.json') assert.match(warned.join('\n'), /ignoring unknown key\(s\): /, text);
    // A bad file is bad for its own reason, not for a missing key every bad file of the corpus shares.
    if (!valid) assert.doesNotMatch(byLoader, /"object" is required/, text);
  }
});

test('the YAML files `service init` writes name their schema and pass it', async () => {
  const { initCommand } = await import('../cli/init.js');
  const dir = join(tempDir('svc-init-schema-'), 'p');
  assert.equal(initCommand({ command: 'init', positionals: [dir], values: new Map() } as unknown as Parameters<typeof initCommand>[0], { out: () => {}, err: () => {} }), 0);
  for (const [file, schema] of [['models/service_build.yml', 'service_build.schema.json'], ['models/env.yaml', 'env.schema.json']] as const) {
    const text = readFileSync(join(dir, file), 'utf8');
    const m = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
    assert.ok(m, `${file} names its schema`);
    assert.ok(m[1]!.endsWith(`/schemas/${schema}`), m[1]);
    assert.deepEqual([schemaVerdict(schema, text), loaderVerdict(schema, text)], ['', ''], file);
  }
});
