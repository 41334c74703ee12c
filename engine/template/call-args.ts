/**
 * Keyword arguments as template globals receive them. nunjucks passes
 * `f(1, a=2)` as `f(1, { a: 2, __keywords: true })`; the compiler's globals
 * (`ref`, `var`, `env_var`, `config`) and our own (`dict`, `namespace`) split
 * that back into Python's positional and keyword arguments.
 */

export interface CallArgs {
  readonly positional: unknown[];
  readonly kwargs: Record<string, unknown>;
}

/** Splits a global's `arguments` into positional values and keyword arguments (without the `__keywords` marker). */
export function callArgs(args: readonly unknown[]): CallArgs {
  const last = args[args.length - 1];
  if (!isKeywordArgs(last)) return { positional: [...args], kwargs: {} };
  const kwargs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(last)) if (k !== '__keywords') kwargs[k] = v;
  return { positional: args.slice(0, -1), kwargs };
}

function isKeywordArgs(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && (value as { __keywords?: unknown }).__keywords === true;
}
