/**
 * `${NAME}` / `${NAME:-fallback}` substitution on the raw config text before
 * YAML parsing. Substituted text is not re-scanned. A token
 * whose variable is unset (and has no fallback) stays literally in the text;
 * it is an error only if the invocation uses the field holding it, which the
 * caller decides with `unresolvedIn`.
 */

const TOKEN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface Substitution {
  readonly text: string;
  /** Names whose tokens were left in the text. */
  readonly unresolved: ReadonlySet<string>;
}

export function substituteEnv(text: string, lookup: (name: string) => string | undefined): Substitution {
  const unresolved = new Set<string>();
  const out = text.replace(TOKEN, (whole, name: string, fallback: string | undefined) => {
    const v = lookup(name);
    if (v !== undefined) return v;
    if (fallback !== undefined) return fallback;
    unresolved.add(name);
    return whole;
  });
  return { text: out, unresolved };
}

/** The first unresolved variable named by a token inside `value` (strings searched deeply). */
export function unresolvedIn(value: unknown, unresolved: ReadonlySet<string>): string | undefined {
  if (unresolved.size === 0 || value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    for (const m of value.matchAll(TOKEN)) if (unresolved.has(m[1]!)) return m[1];
    return undefined;
  }
  if (Array.isArray(value)) {
    for (const v of value) {
      const hit = unresolvedIn(v, unresolved);
      if (hit) return hit;
    }
    return undefined;
  }
  if (typeof value === 'object') return unresolvedIn(Object.values(value as object), unresolved);
  return undefined;
}
