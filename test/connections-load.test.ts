/**
 * Connection loading: properties and URL forms,
 * DuckDB path resolution (env file directory for `instance:`, working
 * directory for URLs), environment-variable URLs, source precedence with
 * case-insensitive names, listings without secrets, and broken files.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConnections, readEnvFile } from '../engine/connections/load-connections.js';
import { EngineError } from '../engine/errors.js';

async function fixture(t: { after: (fn: () => Promise<void>) => void }) {
  const root = await mkdtemp(join(tmpdir(), 'connections-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const project = join(root, 'project');
  const home = join(root, 'home');
  const cwd = join(root, 'cwd');
  await Promise.all([mkdir(project), mkdir(home), mkdir(cwd)]);
  return { root, project, home, cwd };
}

const PROJECT_ENV = `
connections:
  WAREHOUSE:
    type: postgres
    host: db.internal
    port: 6543
    user: loader
    password: s3cret-pw
    database: analytics
    sslmode: require
    schema: staging
  REPORTING:
    url: postgresql://reader:p%40ss%3Aword@db.internal/reporting?sslmode=disable&schema=rep
  lake:
    type: duckdb
    instance: data/lake.duckdb
  URLDUCK:
    url: duckdb://rel/wh.duckdb
  EXPORTS:
    type: local
    url: file:///srv/exports
  SNOW:
    type: snowflake
    account: xy
env:
  START_DATE: '2025-01-01'
  N: 3
`;

const HOME_ENV = `
connections:
  warehouse:
    url: postgres://other@elsewhere/db
  LAKE:
    type: duckdb
    instance: /abs/home-lake.duckdb
  HOSTONLY:
    type: postgres
    username: u
    dbname: d
`;

test('properties and URL forms from the project file, host file and environment', async (t) => {
  const f = await fixture(t);
  await writeFile(join(f.project, 'env.yaml'), PROJECT_ENV);
  await writeFile(join(f.home, 'env.yaml'), HOME_ENV);
  const env = {
    SERVICE_HOME_DIR: f.home,
    DUCK: 'duckdb://wh.duckdb',
    MEM: 'duckdb://:memory:',
    ABS: 'duckdb:///var/data/abs.duckdb',
    PG: 'postgresql://postgres@localhost:5432/postgres',
    HOSTONLY: 'postgres://env@envhost/db',
    SERVICE_STATE: 'postgres://state@localhost/state',
    HOME: '/root',
    '1BAD': 'postgres://x@y/z',
  };
  const reg = loadConnections({ projectEnvFile: join(f.project, 'env.yaml'), env, cwd: f.cwd });
  assert.deepEqual(reg.problems, []);

  assert.deepEqual(reg.get('warehouse'), {
    type: 'postgres',
    name: 'WAREHOUSE',
    source: 'project',
    host: 'db.internal',
    port: 6543,
    user: 'loader',
    password: 's3cret-pw',
    database: 'analytics',
    sslmode: 'require',
    schema: 'staging',
  });
  assert.deepEqual(reg.get('REPORTING'), {
    type: 'postgres',
    name: 'REPORTING',
    source: 'project',
    host: 'db.internal',
    port: 5432,
    user: 'reader',
    password: 'p@ss:word',
    database: 'reporting',
    sslmode: 'disable',
    schema: 'rep',
  });
  assert.deepEqual(reg.get('LAKE'), { type: 'duckdb', name: 'lake', source: 'project', path: join(f.project, 'data/lake.duckdb'), schema: 'main' });
  assert.deepEqual(reg.get('urlduck'), { type: 'duckdb', name: 'URLDUCK', source: 'project', path: join(f.cwd, 'rel/wh.duckdb'), schema: 'main', cwdRelative: 'rel/wh.duckdb' });
  assert.deepEqual(reg.get('EXPORTS'), { type: 'file', name: 'EXPORTS', source: 'project', url: 'file:///srv/exports' });
  assert.deepEqual(reg.get('SNOW'), { type: 'unsupported', name: 'SNOW', source: 'project', declaredType: 'snowflake' });

  const hostOnly = reg.get('HOSTONLY');
  assert.equal(hostOnly?.source, 'host', 'host file beats the environment variable');
  assert.equal(hostOnly?.type === 'postgres' && `${hostOnly.user}@${hostOnly.host}/${hostOnly.database}`, 'u@localhost/d');

  assert.deepEqual(reg.get('DUCK'), { type: 'duckdb', name: 'DUCK', source: 'env_var', path: join(f.cwd, 'wh.duckdb'), schema: 'main', cwdRelative: 'wh.duckdb' });
  assert.deepEqual(reg.get('MEM'), { type: 'duckdb', name: 'MEM', source: 'env_var', path: ':memory:', schema: 'main' });
  assert.deepEqual(reg.get('ABS'), { type: 'duckdb', name: 'ABS', source: 'env_var', path: '/var/data/abs.duckdb', schema: 'main' });
  assert.equal(reg.get('pg')?.source, 'env_var');
  assert.equal(reg.get('SERVICE_STATE'), undefined, 'SERVICE_* variables are never connections');
  assert.equal(reg.get('HOME'), undefined);
  assert.equal(reg.get('1BAD'), undefined);

  assert.deepEqual(reg.list(), [
    { name: 'ABS', type: 'duckdb', kind: 'database', source: 'env_var' },
    { name: 'DUCK', type: 'duckdb', kind: 'database', source: 'env_var' },
    { name: 'EXPORTS', type: 'file', kind: 'file', source: 'project' },
    { name: 'HOSTONLY', type: 'postgres', kind: 'database', source: 'host' },
    { name: 'MEM', type: 'duckdb', kind: 'database', source: 'env_var' },
    { name: 'PG', type: 'postgres', kind: 'database', source: 'env_var' },
    { name: 'REPORTING', type: 'postgres', kind: 'database', source: 'project' },
    { name: 'SNOW', type: 'snowflake', kind: 'unsupported', source: 'project' },
    { name: 'URLDUCK', type: 'duckdb', kind: 'database', source: 'project' },
    { name: 'WAREHOUSE', type: 'postgres', kind: 'database', source: 'project' },
    { name: 'lake', type: 'duckdb', kind: 'database', source: 'project' },
  ]);
  assert.ok(!JSON.stringify(reg.list()).includes('s3cret'), 'listings carry no secrets');

  assert.throws(() => reg.require('nope'), (e: unknown) => e instanceof EngineError && e.code === 'target' && e.message === `connection 'nope' not found`);
  assert.equal(reg.require('Warehouse').name, 'WAREHOUSE');
  assert.equal(reg.redact('password authentication failed: s3cret-pw, p@ss:word'), 'password authentication failed: ***, ***');
});

test('without a project file the host file and environment still apply', async (t) => {
  const f = await fixture(t);
  await writeFile(join(f.home, 'env.yaml'), HOME_ENV);
  const reg = loadConnections({ env: { SERVICE_HOME_DIR: f.home, WAREHOUSE: 'duckdb://w.duckdb' }, cwd: f.cwd });
  assert.deepEqual(reg.get('WAREHOUSE'), {
    type: 'postgres',
    name: 'warehouse',
    source: 'host',
    host: 'elsewhere',
    port: 5432,
    user: 'other',
    database: 'db',
    sslmode: 'disable',
    schema: 'public',
  });
  const envOnly = loadConnections({ projectEnvFile: join(f.project, 'missing.yaml'), env: { SERVICE_HOME_DIR: join(f.root, 'nohome'), DUCK: 'duckdb://x.duckdb' }, cwd: f.cwd });
  assert.deepEqual(envOnly.problems, [], 'missing files are not problems');
  assert.deepEqual(envOnly.list(), [{ name: 'DUCK', type: 'duckdb', kind: 'database', source: 'env_var' }]);
});

test('broken files and entries are reported, not fatal, and a broken entry still shadows its name', async (t) => {
  const f = await fixture(t);
  await writeFile(join(f.home, 'env.yaml'), HOME_ENV);
  const projectFile = join(f.project, 'env.yaml');
  await writeFile(projectFile, 'connections:\n  LAKE:\n    type: duckdb\n  WAREHOUSE:\n    type: postgres\n    user: u\n    port: abc\n  bad-name:\n    type: duckdb\n    instance: x.duckdb\n  DUP: {type: duckdb, instance: a.duckdb}\n  dup: {type: duckdb, instance: b.duckdb}\n');
  const reg = loadConnections({ projectEnvFile: projectFile, env: { SERVICE_HOME_DIR: f.home }, cwd: f.cwd });
  assert.deepEqual(
    reg.problems.map((p) => p.message),
    [
      `${projectFile}: connection 'LAKE': duckdb connections need an instance path (instance: <file>) or a duckdb:// URL`,
      `${projectFile}: connection 'WAREHOUSE': port must be an integer between 1 and 65535, got 'abc'`,
      `${projectFile}: connection name 'bad-name' is invalid: expected a letter, then letters, digits or _ (at most 64)`,
      `${projectFile}: connection 'dup' is defined twice (names are case-insensitive)`,
    ],
  );
  assert.equal(reg.get('WAREHOUSE')?.type, 'invalid', 'the host definition does not silently take over');
  assert.deepEqual(reg.get('DUP'), { type: 'duckdb', name: 'DUP', source: 'project', path: join(f.project, 'a.duckdb'), schema: 'main' });

  await writeFile(projectFile, 'connections: [unclosed\n  password: hunter22');
  const unparsable = loadConnections({ projectEnvFile: projectFile, env: { SERVICE_HOME_DIR: f.home }, cwd: f.cwd });
  assert.equal(unparsable.problems.length, 1);
  assert.match(unparsable.problems[0]!.message, new RegExp(`^could not parse ${projectFile}: `));
  assert.ok(!unparsable.problems[0]!.message.includes('hunter22'));
  assert.equal(unparsable.get('LAKE')?.source, 'host', 'other sources still load');
});

test('URL and properties edge cases', async (t) => {
  const f = await fixture(t);
  const file = join(f.project, 'env.yaml');
  await writeFile(
    file,
    [
      'connections:',
      '  A: {url: "postgres://u@[::1]:5433/db?sslmode=verify-full"}',
      '  B: {type: postgres, url: "duckdb://x.duckdb"}',
      '  C: {url: "mysql://u:p@h/db"}',
      '  D: {type: postgres, user: u, sslmode: sometimes}',
      '  E: {type: duckdb, instance: ":memory:", schema: raw}',
      '  F: {url: "duckdb:///data/my%20file.duckdb?schema=stage"}',
      '  G: just-a-string',
    ].join('\n'),
  );
  const c = readEnvFile(file, 'project', f.cwd).connections;
  const byName = Object.fromEntries(c.map((x) => [x.name, x]));
  assert.deepEqual(byName.A, { type: 'postgres', name: 'A', source: 'project', host: '::1', port: 5433, user: 'u', database: 'db', sslmode: 'verify-full', schema: 'public' });
  assert.deepEqual(byName.B, { type: 'invalid', name: 'B', source: 'project', declaredType: 'postgres', problem: `type 'postgres' does not match the URL scheme 'duckdb'` });
  assert.deepEqual(byName.C, { type: 'unsupported', name: 'C', source: 'project', declaredType: 'mysql' });
  assert.equal(byName.D?.type === 'invalid' && byName.D.problem, `sslmode must be one of: disable, allow, prefer, require, verify-ca, verify-full; got 'sometimes'`);
  assert.deepEqual(byName.E, { type: 'duckdb', name: 'E', source: 'project', path: ':memory:', schema: 'raw' });
  assert.deepEqual(byName.F, { type: 'duckdb', name: 'F', source: 'project', path: '/data/my file.duckdb', schema: 'stage' });
  assert.equal(byName.G?.type, 'invalid');
});

test('readEnvFile returns the env map as text', async (t) => {
  const f = await fixture(t);
  await writeFile(join(f.project, 'env.yaml'), PROJECT_ENV);
  assert.deepEqual(readEnvFile(join(f.project, 'env.yaml'), 'project', f.cwd).env, { START_DATE: '2025-01-01', N: '3' });
});
