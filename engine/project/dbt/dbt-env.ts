/**
 * `env_var('X')` as dbt reads it: a variable set to the empty string is set
 * (dbt's integration profiles pass an empty password that way), unlike our
 * own `${VAR}` lookups where empty means unset.
 */
import { lookupVar } from '../../home-env.js';

export function dbtEnvVar(name: string, stepEnv?: Readonly<Record<string, string>>): string | undefined {
  if (stepEnv !== undefined && Object.hasOwn(stepEnv, name)) return stepEnv[name];
  if (Object.hasOwn(process.env, name)) return process.env[name];
  return lookupVar(name, stepEnv);
}
