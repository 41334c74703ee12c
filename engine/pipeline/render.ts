/**
 * Run-time resolution of step strings: first `${NAME}`
 * substitution from the variable layers, then `{…}` templates evaluated by
 * the interpreter. Brace text that is not a template (SQL, JSON) stays as
 * written; values inside text read as `toText` (objects and lists as JSON).
 *
 * Structured keys (`set` values and maps, an http mapping payload, build and
 * replication `vars`) keep the type of a string that is exactly one
 * template — `value: '{state.q.row_count}'` stores a number — while text
 * keys (messages, URLs, SQL) always get text.
 */
import { EngineError } from '../errors.js';
import { EXPRESSION_FUNCTIONS, EXPRESSION_SCOPES, templateParts, type TemplatePart } from '../jobs/index.js';
import { evaluateSource, toText, type EvalScope, type Value } from './evaluate.js';

/** `${NAME}` lookup; undefined = not set. */
export type VarLookup = (name: string) => string | undefined;

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function varNotSet(name: string): EngineError {
  return new EngineError('node', `variable ${name} is not set`);
}

/** `${NAME}` substitution; an unresolved name fails with `variable NAME is not set`. */
export function substituteVars(text: string, lookup: VarLookup): string {
  if (!text.includes('${')) return text;
  return text.replace(VAR, (_, name: string) => {
    const v = lookup(name);
    if (v === undefined) throw varNotSet(name);
    return v;
  });
}

const NAME_START = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_])(\s*\()?/;
const FUNCTIONS = new Set(EXPRESSION_FUNCTIONS);
const SCOPES = new Set(EXPRESSION_SCOPES);

/**
 * engine/jobs' `templateParts` rule — brace text is an expression when it
 * starts with a scope name or a known function call — with the scopes of
 * this evaluation (model hooks add `model` and `target`).
 */
export function templatePartsIn(text: string, scope: EvalScope): TemplatePart[] {
  const isExpr = (inner: string) => {
    const m = NAME_START.exec(inner);
    if (m === null) return false;
    return m[2] !== undefined ? FUNCTIONS.has(m[1]!) : SCOPES.has(m[1]!) || scope.roots.has(m[1]!);
  };
  return templateParts(text, isExpr);
}

/** `${NAME}` then `{…}`: the text form. */
export function renderText(text: string, scope: EvalScope, vars: VarLookup): string {
  const t = substituteVars(text, vars);
  if (!t.includes('{')) return t;
  return templatePartsIn(t, scope)
    .map((p) => (p.kind === 'text' ? p.text : toText(evaluateSource(p.source, scope))))
    .join('');
}

/** Like renderText, but a string that is exactly one template keeps the expression's value. */
export function renderTyped(text: string, scope: EvalScope, vars: VarLookup): Value {
  const t = substituteVars(text, vars);
  if (!t.includes('{')) return t;
  const parts = templatePartsIn(t, scope);
  if (parts.length === 1 && parts[0]!.kind === 'expr') return evaluateSource(parts[0]!.source, scope);
  return parts.map((p) => (p.kind === 'text' ? p.text : toText(evaluateSource(p.source, scope)))).join('');
}

/**
 * Every string inside a YAML value rendered (mapping keys stay as written);
 * `typed` keeps single-template strings' values (renderTyped).
 */
export function renderDeep(value: unknown, scope: EvalScope, vars: VarLookup, typed: boolean): Value {
  if (typeof value === 'string') return typed ? renderTyped(value, scope, vars) : renderText(value, scope, vars);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, scope, vars, typed));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, Value> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: renderDeep(v, scope, vars, typed), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (value === undefined) return null;
  return value as Value;
}

/** An expression key (`if`, `check`, `loop`): `${NAME}` substituted; a whole `{…}` around it is accepted. */
export function expressionText(text: string, vars: VarLookup, scope: EvalScope = { roots: new Map() }): string {
  const t = substituteVars(text, vars);
  const whole = /^\s*\{([^]*)\}\s*$/.exec(t);
  if (whole !== null) {
    const parts = templatePartsIn(t.trim(), scope);
    if (parts.length === 1 && parts[0]!.kind === 'expr') return parts[0]!.source;
  }
  return t;
}
