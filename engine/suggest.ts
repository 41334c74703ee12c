/**
 * "Did you mean" hints for names that do not resolve:
 * shared by failing exact selectors, `ref()` and `relationships.to`, so the
 * three report near-misses identically. A candidate qualifies when its name
 * ends with `_<query>` (the user left off a prefix such as `stg_`) or is
 * within Levenshtein distance 2; comparison is case-insensitive like names
 * themselves.
 */

export interface SuggestionCandidate {
  readonly name: string;
  readonly file: string;
}

const MAX_SUGGESTIONS = 5;
const MAX_DISTANCE = 2;
const NAME_WIDTH = 20;

/**
 * `''` when nothing is close, else ` Did you mean:` followed by up to five
 * lines `\n  %-20s %s` (name, file), sorted by name. Append it directly to a
 * message ending in `.`: `selector 'stg_order' not found. Did you mean:…`.
 */
export function suggestions(query: string, candidates: readonly SuggestionCandidate[]): string {
  const q = query.toLowerCase();
  const suffix = `_${q}`;
  const seen = new Set<string>();
  const close: SuggestionCandidate[] = [];
  for (const c of candidates) {
    const n = c.name.toLowerCase();
    if (seen.has(n)) continue;
    if (n.endsWith(suffix) || withinDistance(q, n, MAX_DISTANCE)) {
      seen.add(n);
      close.push(c);
    }
  }
  if (close.length === 0) return '';
  close.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = close.slice(0, MAX_SUGGESTIONS).map((c) => `\n  ${c.name.padEnd(NAME_WIDTH)} ${c.file}`);
  return ` Did you mean:${lines.join('')}`;
}

/**
 * Levenshtein distance bounded by `max`: a length gap above `max` is rejected
 * without work, and a row whose minimum exceeds `max` stops early, so checking
 * 10,000 candidates costs a few milliseconds.
 */
export function withinDistance(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      cur.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return false;
    prev = cur;
  }
  return prev[b.length] <= max;
}

/**
 * The one name closest to a mistyped word (a command, a verb), or undefined
 * when none is near: within edit distance 1 for words under 4 letters, else
 * 2 (a swapped pair of letters) or a third of the word's length, or the one
 * name the word begins.
 */
export function closestName(query: string, names: readonly string[]): string | undefined {
  const q = query.toLowerCase();
  const prefixed = names.filter((n) => q.length >= 2 && n.startsWith(q));
  if (prefixed.length === 1) return prefixed[0];
  const limit = q.length < 4 ? 1 : Math.max(2, Math.floor(q.length / 3));
  for (let d = 1; d <= limit; d++) {
    const hit = names.find((n) => withinDistance(q, n.toLowerCase(), d));
    if (hit !== undefined) return hit;
  }
  return undefined;
}
