/**
 * Node names: prod schema = first folder of the discovery
 * path (`public` at the root); dev mode puts every node in the dev schema;
 * an explicit schema (front-matter, then defaults.schema) wins in both modes.
 */
import type { Logger } from '../log.js';
import type { Settings } from './config.js';

export interface NodeName {
  readonly database?: string;
  readonly schema: string;
  readonly name: string;
  /** `[db.]prodSchema.name`, ignoring schema overrides: what references match. */
  readonly prodName: string;
  /** `[db.]schema.name` in the current naming mode. */
  readonly fullName: string;
}

export function prodSchemaOf(rel: string): string {
  const slash = rel.indexOf('/');
  return slash < 0 ? 'public' : rel.slice(0, slash);
}

export interface NameInput {
  readonly kind: 'model' | 'seed';
  readonly name: string;
  /** Discovery-relative path. */
  readonly rel: string;
  /** Front-matter schema/database (models only). */
  readonly schema?: string;
  readonly database?: string;
  readonly defaultsSchema?: string;
  readonly defaultsDatabase?: string;
}

export function nameNode(input: NameInput, settings: Settings, logger: Logger): NodeName {
  const prodSchema = prodSchemaOf(input.rel);
  const override = (input.kind === 'model' ? input.schema : undefined) ?? input.defaultsSchema;
  const dev = settings.naming === 'dev';
  let schema = dev ? settings.devSchema! : prodSchema;
  if (override !== undefined && override !== '') {
    if (dev && override !== settings.devSchema) {
      logger.log('warn', `${input.kind} '${input.name}': schema '${override}' overrides the dev schema '${settings.devSchema}'`);
    }
    schema = override;
  }
  const fm = input.kind === 'model' ? input.database : undefined;
  const database = nonEmpty(fm) ?? (dev ? nonEmpty(settings.devDatabase) : undefined) ?? nonEmpty(input.defaultsDatabase);
  const prefix = database ? `${database}.` : '';
  return {
    database,
    schema,
    name: input.name,
    prodName: `${prefix}${prodSchema}.${input.name}`,
    fullName: `${prefix}${schema}.${input.name}`,
  };
}

const nonEmpty = (s: string | undefined) => (s === undefined || s === '' ? undefined : s);

/** The name's parts (`[db,] schema, name`), for rendering with renderName. */
export function nameParts(n: Pick<NodeName, 'database' | 'schema' | 'name'>): string[] {
  return n.database ? [n.database, n.schema, n.name] : [n.schema, n.name];
}
