/**
 * `profiles.yml`: found in `--profiles-dir`, then `DBT_PROFILES_DIR`, then
 * the project directory, then `~/.dbt/` (dbt's order). The file is rendered
 * with `env_var()` before parsing; the profile's `target` (or `--target`)
 * picks the output, which becomes a connection of our own kind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parseYaml } from '../../yaml-lib.js';
import type { Connection } from '../../connections/index.js';
import { EngineError } from '../../errors.js';
import { lookupVar } from '../../home-env.js';
import { dbtEnvVar } from './dbt-env.js';
import { createNunjucksEngine } from '../../template/nunjucks-engine.js';
import { callArgs } from '../../template/call-args.js';
import { pyModules } from './py-modules.js';
import { yamlErrorDetail } from '../yaml-error.js';

export interface ProfileOptions {
  readonly profilesDir?: string;
  readonly target?: string;
  readonly stepEnv?: Readonly<Record<string, string>>;
}

export interface ResolvedProfile {
  /** The output's name (`dev`): `target.name`. */
  readonly targetName: string;
  readonly connection: Connection;
  /** `target.*` in templates. */
  readonly target: Readonly<Record<string, unknown>>;
  readonly file: string;
}

function profilesFile(root: string, opts: ProfileOptions): string {
  const tried: string[] = [];
  const candidates: [string, string][] = [];
  if (opts.profilesDir !== undefined) candidates.push([resolve(opts.profilesDir), '--profiles-dir']);
  else {
    const envDir = lookupVar('DBT_PROFILES_DIR', opts.stepEnv);
    if (envDir !== undefined) candidates.push([resolve(envDir), 'DBT_PROFILES_DIR']);
    else candidates.push([root, 'the project directory'], [join(homedir(), '.dbt'), '~/.dbt']);
  }
  for (const [dir] of candidates) {
    const f = join(dir, 'profiles.yml');
    if (existsSync(f)) return f;
    tried.push(f);
  }
  throw new EngineError('target', `no profiles.yml found (looked in ${tried.join(', ')}); pass --profiles-dir <dir> or set DBT_PROFILES_DIR`);
}

/** `{{ env_var('X', 'default') }}` and `{{ var(...) }}`-free Jinja in profiles.yml. */
function renderProfiles(file: string, text: string, stepEnv?: Readonly<Record<string, string>>): string {
  const env_var = (...args: unknown[]) => {
    const { positional } = callArgs(args);
    const name = String(positional[0] ?? '');
    const v = dbtEnvVar(name, stepEnv);
    if (v !== undefined) return v;
    if (positional.length >= 2) return positional[1];
    // Only the output in use must resolve: a marker here fails later if the chosen output holds it.
    return `__unset_env_var_${name}__`;
  };
  // dbt's base context: env_var, var (with its default: --vars are not known here) and modules.
  const v = (...args: unknown[]) => {
    const { positional } = callArgs(args);
    if (positional.length >= 2) return positional[1];
    return `__unset_var_${String(positional[0] ?? '')}__`;
  };
  return createNunjucksEngine().render(file, text, { env_var, var: v, modules: pyModules(new Date()) }, 'profiles.yml');
}

const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));

export function resolveProfile(root: string, profileName: string, opts: ProfileOptions): ResolvedProfile {
  const file = profilesFile(root, opts);
  let doc: unknown;
  try {
    doc = parseYaml(renderProfiles(file, readFileSync(file, 'utf8'), opts.stepEnv));
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError('target', `could not parse ${file}: ${yamlErrorDetail(err)}`);
  }
  const profile = (doc as Record<string, unknown> | null)?.[profileName] as Record<string, unknown> | undefined;
  if (!profile || typeof profile !== 'object') throw new EngineError('target', `${file}: profile '${profileName}' (named in dbt_project.yml) not found`);
  const outputs = (profile.outputs ?? {}) as Record<string, Record<string, unknown>>;
  const targetName = opts.target ?? str(profile.target);
  if (targetName === undefined) throw new EngineError('target', `${file}: profile '${profileName}' has no target; set target: or pass --target <output>`);
  const out = outputs[targetName];
  if (!out || typeof out !== 'object') {
    throw new EngineError('target', `${file}: profile '${profileName}' has no output '${targetName}' (outputs: ${Object.keys(outputs).join(', ') || 'none'})`);
  }
  for (const [k, v] of Object.entries(out)) {
    const m = /__unset_(env_var|var)_(\w+?)__/.exec(String(v));
    if (m) throw new EngineError('target', `${file}: output '${targetName}' field '${k}': ${m[1]}('${m[2]}') is not set and has no default`);
  }
  const type = str(out.type);
  const threads = Number(out.threads ?? 1);
  if (type === 'postgres') {
    const schema = str(out.schema) ?? 'public';
    const database = str(out.dbname ?? out.database);
    if (database === undefined) throw new EngineError('target', `${file}: output '${targetName}' needs dbname`);
    const connection: Connection = {
      name: targetName,
      source: 'project',
      type: 'postgres',
      host: str(out.host) ?? '127.0.0.1',
      port: Number(out.port ?? 5432),
      user: str(out.user) ?? 'postgres',
      ...(out.password !== undefined && out.password !== null && out.password !== '' ? { password: String(out.password) } : {}),
      database,
      sslmode: (str(out.sslmode) as 'prefer' | undefined) ?? 'prefer',
      schema,
    };
    return { targetName, connection, file, target: { name: targetName, type, schema, database, dbname: database, host: connection.host, port: connection.port, user: connection.user, threads, profile_name: profileName } };
  }
  if (type === 'duckdb') {
    const raw = str(out.path) ?? ':memory:';
    // Relative paths resolve against the project directory, so the command works from any directory.
    const path = raw === ':memory:' || isAbsolute(raw) ? raw : resolve(root, raw);
    const schema = str(out.schema) ?? 'main';
    const database = raw === ':memory:' ? 'memory' : (path.split('/').pop() ?? 'main').replace(/\.[^.]*$/, '');
    const connection: Connection = { name: targetName, source: 'project', type: 'duckdb', path, schema };
    return { targetName, connection, file, target: { name: targetName, type, schema, database, path, threads, profile_name: profileName } };
  }
  throw new EngineError('target', `${file}: output '${targetName}' has type '${type ?? ''}'; dbt projects run on postgres and duckdb outputs`);
}
