/**
 * Where a dbt resource's relation lives: dbt's generate_schema_name and
 * generate_alias_name, or the project's own macros of those names.
 */
import { EngineError } from '../../errors.js';
import type { NodeName } from '../naming.js';
import { withScopes } from './macro-scopes.js';
import { CAPTURE, dbtContext } from './dbt-context.js';
import type { RenderState } from './dbt-render-types.js';
import type { DbtScope } from './dbt-scope.js';

function macroCall(scope: DbtScope, macro: string, args: Record<string, unknown>): string {
  const state: RenderState = { deps: new Set(), config: {} };
  const ctx = dbtContext(scope.env(scope.placeholderRef), { name: macro, file: 'macros', isIncremental: false }, state);
  Object.assign(ctx, withScopes(scope.engine, scope.macros, state, ctx), { __args: args });
  return scope.engine.render(`__naming_${macro}`, `${CAPTURE}{{ ${macro}(__args.custom, __args.node) }}`, ctx, macro, scope.macros.prefix).trim();
}

const unset = (custom: unknown) => custom === undefined || custom === null || custom === '';

function schemaFor(scope: DbtScope, custom: unknown, node: Record<string, unknown>): string {
  if (scope.macros.projectMacros.has('generate_schema_name')) return macroCall(scope, 'generate_schema_name', { custom: custom ?? null, node });
  return unset(custom) ? scope.targetSchema : `${scope.targetSchema}_${String(custom).trim()}`;
}

function aliasFor(scope: DbtScope, custom: unknown, node: Record<string, unknown>): string {
  if (scope.macros.projectMacros.has('generate_alias_name')) return macroCall(scope, 'generate_alias_name', { custom: custom ?? null, node });
  return unset(custom) ? String(node.name) : String(custom);
}

export function nameOf(scope: DbtScope, name: string, config: Record<string, unknown>, resource: string): NodeName {
  const node = { name, resource_type: resource, config, unique_id: `${resource}.${scope.pf.name}.${name}` };
  // A snapshot's target_schema is used as written (dbt's legacy form); schema: goes through generate_schema_name.
  const schema = resource === 'snapshot' && config.target_schema ? String(config.target_schema) : schemaFor(scope, config.schema, node);
  const alias = aliasFor(scope, config.alias, node);
  const dbc = config.target_database ?? config.database;
  const db = dbc === undefined || dbc === null ? undefined : String(dbc);
  if (db !== undefined && scope.targetType === 'postgres' && db !== scope.profile.target.database) throw new EngineError('compile', `${resource} '${name}': database '${db}' differs from the profile's dbname; postgres cannot write across databases`);
  const database = scope.targetType === 'duckdb' ? db : undefined;
  const full = `${database ? `${database}.` : ''}${schema}.${alias}`;
  return { ...(database ? { database } : {}), schema, name: alias, prodName: full, fullName: full };
}
