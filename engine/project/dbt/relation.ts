/**
 * dbt's Relation as templates see it: prints as its quoted name and exposes
 * dbt's attributes and methods (`database`, `schema`, `identifier`, `name`,
 * `type`, `is_table`, `is_view`, `is_cte`, `include()`, `quote()`,
 * `incorporate()`, `render()`), and answers `.get('metadata')` as dbt's
 * mapping-like Relation does (dbt_utils' `_is_relation` checks it).
 */
import { callArgs } from '../../template/call-args.js';

export type RelationType = 'table' | 'view' | 'cte' | 'materialized_view' | 'external' | null;

interface Policy {
  readonly database: boolean;
  readonly schema: boolean;
  readonly identifier: boolean;
}

const ALL: Policy = { database: true, schema: true, identifier: true };
const EPHEMERAL_PREFIX = '__dbt__cte__';

/** A name part needs quotes unless it is a plain lower-case identifier (as our SQL always quoted). */
const quoteIfNeeded = (s: string) => (/^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replaceAll('"', '""')}"`);

export class DbtRelation {
  constructor(
    readonly database: string | undefined,
    readonly schema: string,
    readonly identifier: string,
    readonly type: RelationType = null,
    private readonly includePolicy: Policy = ALL,
    private readonly quotePolicy: Partial<Policy> = {},
  ) {}

  /** `relation is mapping` holds, as for dbt's Relation (a Mapping). */
  get [Symbol.for('jinja.mapping')](): boolean {
    return true;
  }
  get name(): string {
    return this.identifier;
  }
  get table(): string {
    return this.identifier;
  }
  get is_table(): boolean {
    return this.type === 'table';
  }
  get is_view(): boolean {
    return this.type === 'view';
  }
  get is_cte(): boolean {
    return this.type === 'cte';
  }
  get is_materialized_view(): boolean {
    return this.type === 'materialized_view';
  }
  get path(): Record<string, string | null> {
    return { database: this.database ?? null, schema: this.schema, identifier: this.identifier };
  }
  get metadata(): Record<string, string> {
    return { type: 'DbtRelation' };
  }
  /** dbt's Relation is a Mapping: `relation.get('metadata', {})`. */
  get(key: unknown, dflt: unknown = null): unknown {
    if (key === 'metadata') return this.metadata;
    if (key === 'path') return this.path;
    if (key === 'type') return this.type;
    return dflt;
  }
  include(...args: unknown[]): DbtRelation {
    return new DbtRelation(this.database, this.schema, this.identifier, this.type, { ...this.includePolicy, ...policyArgs(args) }, this.quotePolicy);
  }
  quote(...args: unknown[]): DbtRelation {
    return new DbtRelation(this.database, this.schema, this.identifier, this.type, this.includePolicy, { ...this.quotePolicy, ...policyArgs(args) });
  }
  /** `incorporate(path={'identifier': 'x'}, type='table')`: a copy with some parts replaced. */
  incorporate(...args: unknown[]): DbtRelation {
    const { kwargs } = callArgs(args);
    const path = (kwargs.path ?? {}) as Record<string, unknown>;
    const part = (k: string, v: string | undefined) => (Object.hasOwn(path, k) ? (path[k] === null || path[k] === undefined ? undefined : String(path[k])) : v);
    const type = kwargs.type === undefined ? this.type : (kwargs.type as RelationType);
    return new DbtRelation(part('database', this.database), part('schema', this.schema) ?? '', part('identifier', this.identifier) ?? '', type, this.includePolicy, this.quotePolicy);
  }
  /** `relation.information_schema('columns')`: the catalog view of the relation's database. */
  information_schema(view?: unknown): string {
    const db = this.database ? `${quoteIfNeeded(this.database)}.` : '';
    return view === undefined || view === null ? `${db}information_schema` : `${db}information_schema.${String(view)}`;
  }
  render(): string {
    if (this.type === 'cte') return this.identifier;
    const parts: string[] = [];
    const add = (k: keyof Policy, v: string | undefined) => {
      if (!this.includePolicy[k] || v === undefined || v === '') return;
      const q = this.quotePolicy[k];
      parts.push(q === true ? `"${v.replaceAll('"', '""')}"` : q === false ? v : quoteIfNeeded(v));
    };
    add('database', this.database);
    add('schema', this.schema);
    add('identifier', this.identifier);
    return parts.join('.');
  }
  toString(): string {
    return this.render();
  }
}

function policyArgs(args: readonly unknown[]): Partial<Policy> {
  const { positional, kwargs } = callArgs(args);
  const out: { -readonly [K in keyof Policy]?: boolean } = {};
  (['database', 'schema', 'identifier'] as const).forEach((k, i) => {
    const v = kwargs[k] ?? positional[i];
    if (v !== undefined && v !== null) out[k] = Boolean(v);
  });
  return out;
}

/** A relation for `ref()` of an ephemeral model: renders as the CTE's name. */
export const cteRelation = (model: string) => new DbtRelation(undefined, '', `${EPHEMERAL_PREFIX}${model}`, 'cte');

/** `api.Relation`: create(), add_ephemeral_prefix(). */
export function relationApi(databaseKept: boolean): Record<string, unknown> {
  return {
    create: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const [database, schema, identifier, type] = [kwargs.database ?? positional[0], kwargs.schema ?? positional[1], kwargs.identifier ?? positional[2], kwargs.type ?? positional[3]];
      const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
      return new DbtRelation(databaseKept ? str(database) : undefined, str(schema) ?? '', str(identifier) ?? '', (str(type) ?? null) as RelationType);
    },
    add_ephemeral_prefix: (name: unknown) => `${EPHEMERAL_PREFIX}${String(name)}`,
  };
}
