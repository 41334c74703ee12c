/**
 * dbt's type filters (`as_number`, `as_bool`, `as_native`, `as_text`): a
 * rendered config value is text; these read it as the Python literal it
 * spells (ast.literal_eval: numbers, strings, True/False/None, lists,
 * tuples, dicts). `as_number` and `as_bool` fail on anything else, naming
 * the value; `as_native` leaves text that is not a literal as it is.
 */
import { jinjaParser } from './jinja-parser.js';
import type { NjNode } from './nunjucks-internals.js';
import { pyRepr, pyStr } from './py-values.js';

const NOT_LITERAL = Symbol('not a literal');

/**
 * What profiles.ts renders for an environment variable that is not set: it
 * reports the variable only when the target in use holds it, so a filter
 * passes it through instead of failing on another target's value.
 */
const UNSET_ENV_VAR = /^__unset_env_var_\w+__$/;

/** The Python literal `text` spells, or NOT_LITERAL. */
function literalEval(text: string): unknown {
  if (text.includes('{{') || text.includes('{%') || text.includes('}}') || text.includes('%}') || text.includes('{#')) return NOT_LITERAL;
  let root: NjNode;
  try {
    root = jinjaParser().parse(`{{ (${text}) }}`);
  } catch {
    return NOT_LITERAL;
  }
  const output = (root.children as NjNode[])[0];
  const expr = output?.typename === 'Output' && (output.children as NjNode[]).length === 1 ? (output.children as NjNode[])[0] : undefined;
  return expr === undefined ? NOT_LITERAL : evalNode(expr);
}

function evalNode(node: NjNode): unknown {
  switch (node.typename) {
    case 'Literal':
      return node.value instanceof RegExp ? NOT_LITERAL : node.value;
    case 'Symbol':
      return node.value === 'True' ? true : node.value === 'False' ? false : node.value === 'None' ? null : NOT_LITERAL;
    case 'Neg':
    case 'Pos': {
      const v = evalNode(node.target as NjNode);
      if (typeof v !== 'number') return NOT_LITERAL;
      return node.typename === 'Neg' ? -v : v;
    }
    case 'Group':
    case 'Array': {
      const items = (node.children as NjNode[]).map(evalNode);
      if (items.includes(NOT_LITERAL)) return NOT_LITERAL;
      return node.typename === 'Group' && items.length === 1 ? items[0] : items;
    }
    case 'Dict': {
      const out: Record<string, unknown> = {};
      for (const pair of node.children as NjNode[]) {
        const k = evalNode(pair.key as NjNode);
        const v = evalNode(pair.value as NjNode);
        if (k === NOT_LITERAL || v === NOT_LITERAL || (typeof k === 'object' && k !== null)) return NOT_LITERAL;
        out[String(k)] = v;
      }
      return out;
    }
    default:
      return NOT_LITERAL;
  }
}

function asNative(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const v = literalEval(value.trim());
  return v === NOT_LITERAL ? value : v;
}

function asNumber(value: unknown): unknown {
  if (typeof value === 'string' && UNSET_ENV_VAR.test(value)) return value;
  const v = asNative(value);
  if (typeof v === 'number') return v;
  throw new TypeError(`as_number: ${pyRepr(value)} is not a number`);
}

function asBool(value: unknown): unknown {
  if (typeof value === 'string' && UNSET_ENV_VAR.test(value)) return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  const v = asNative(value);
  if (typeof v === 'boolean') return v;
  throw new TypeError(`as_bool: ${pyRepr(value)} is not a boolean`);
}

export const typeFilters = {
  as_native: asNative,
  as_number: asNumber,
  as_bool: asBool,
  as_text: (value: unknown): string => (value === undefined ? '' : pyStr(value)),
} as const;
