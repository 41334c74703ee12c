/**
 * Deterministic random DAGs for the benchmark projects: a seeded PRNG
 * (mulberry32) so two runs on two machines generate byte-identical projects,
 * and a DAG where node i depends on 1–k distinct earlier nodes (so index
 * order is a topological order).
 */

/** mulberry32: a tiny 32-bit PRNG, uniform in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [lo, hi]. */
export const between = (rand: () => number, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

/**
 * `deps[i]`: distinct indexes < i, between `minRefs` and `maxRefs` of them
 * (fewer only when i is small). Node 0 has none. Parents are drawn from the
 * last `window` nodes half of the time and uniformly otherwise, which gives
 * both long chains and wide fan-outs, like real projects.
 */
export function randomDag(n: number, seed: number, minRefs = 1, maxRefs = 3, window = 50): number[][] {
  const rand = prng(seed);
  const deps: number[][] = [];
  for (let i = 0; i < n; i++) {
    const want = Math.min(i, between(rand, minRefs, maxRefs));
    const picked = new Set<number>();
    while (picked.size < want) {
      const recent = rand() < 0.5;
      const lo = recent ? Math.max(0, i - window) : 0;
      picked.add(between(rand, lo, i - 1));
    }
    deps.push([...picked].sort((a, b) => a - b));
  }
  return deps;
}

/** Longest chain (in nodes) of a DAG given in topological index order. */
export function criticalPathLength(deps: readonly (readonly number[])[]): number {
  const depth: number[] = [];
  let longest = 0;
  for (let i = 0; i < deps.length; i++) {
    let d = 0;
    for (const p of deps[i]!) d = Math.max(d, depth[p]!);
    depth.push(d + 1);
    longest = Math.max(longest, d + 1);
  }
  return longest;
}
