/**
 * DAG order. Kahn's algorithm with a deterministic
 * tie-break: the queue starts with every node that has no dependencies,
 * sorted by name in code-point order, and each popped node's newly freed
 * dependents are sorted and appended. This order is `order` in compile output
 * and the order of every result list, so it must never depend on input order.
 *
 * When nodes remain after Kahn, the leftovers contain at least one cycle; the
 * error names one simple cycle per strongly connected component, written in
 * dependency direction (`a -> b` = a depends on b), each starting at its
 * smallest name, several cycles sorted and joined by `; `.
 */

import { EngineError } from '../errors.js';
import { key } from './graph.js';

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Orders `names` so every node comes after its dependencies. `deps` maps a
 * lower-cased name to the lower-cased names it depends on; dependencies that
 * are not in `names` (disabled models, external tables) are ignored.
 * Returns the original-case names. Throws EngineError('compile') on a cycle.
 */
export function topoOrder(names: readonly string[], deps: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  names.forEach((n, i) => index.set(key(n), i));
  const parents = dependencyLists(names, deps, index);

  const inDegree = parents.map((p) => p.length);
  const children: number[][] = names.map(() => []);
  parents.forEach((ps, child) => {
    for (const p of ps) children[p].push(child);
  });
  const byName = (a: number, b: number): number => byCodePoint(names[a], names[b]);

  const queue: number[] = [];
  for (let i = 0; i < names.length; i++) if (inDegree[i] === 0) queue.push(i);
  queue.sort(byName);
  for (let head = 0; head < queue.length; head++) {
    const freed: number[] = [];
    for (const c of children[queue[head]]) if (--inDegree[c] === 0) freed.push(c);
    freed.sort(byName);
    queue.push(...freed);
  }

  if (queue.length < names.length) {
    const emitted = new Uint8Array(names.length);
    for (const i of queue) emitted[i] = 1;
    const cycles = findCycles(names, parents, emitted);
    throw new EngineError('compile', `cycle detected in model dependencies: ${cycles.join('; ')}`);
  }
  return queue.map((i) => names[i]);
}

/** Per node, the distinct in-set indices of its dependencies. */
function dependencyLists(
  names: readonly string[],
  deps: ReadonlyMap<string, readonly string[]>,
  index: ReadonlyMap<string, number>,
): number[][] {
  return names.map((n) => {
    const seen = new Set<number>();
    for (const d of deps.get(key(n)) ?? []) {
      const j = index.get(key(d));
      if (j !== undefined) seen.add(j);
    }
    return [...seen];
  });
}

/**
 * One cycle text per non-trivial strongly connected component among the nodes
 * Kahn could not emit, sorted. Tarjan's algorithm, iterative so a 10,000-node
 * chain cannot overflow the call stack.
 */
function findCycles(names: readonly string[], parents: readonly number[][], emitted: Uint8Array): string[] {
  const n = names.length;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const cycles: string[] = [];
  let counter = 0;

  for (let root = 0; root < n; root++) {
    if (emitted[root] || order[root] !== -1) continue;
    const work: Array<[node: number, edge: number]> = [[root, 0]];
    order[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, e] = frame;
      const edges = parents[v];
      if (e < edges.length) {
        frame[1] = e + 1;
        const w = edges[e];
        if (emitted[w]) continue;
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w]) {
          low[v] = Math.min(low[v], order[w]);
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low[parent] = Math.min(low[parent], low[v]);
      }
      if (low[v] !== order[v]) continue;
      const component: number[] = [];
      let w: number;
      do {
        w = stack.pop()!;
        onStack[w] = 0;
        component.push(w);
      } while (w !== v);
      const selfLoop = component.length === 1 && parents[v].includes(v);
      if (component.length > 1 || selfLoop) cycles.push(cycleText(names, parents, component));
    }
  }
  return cycles.sort(byCodePoint);
}

/**
 * One simple cycle through a strongly connected component: start at the
 * smallest name and, depth first, take the smallest-name next hop inside the
 * component until an edge leads back to the start. Because the start is the
 * smallest name, "smallest next hop" closes the cycle as soon as it can.
 * Every node of the component reaches the start, so the search succeeds; the
 * global visited set keeps it linear.
 */
function cycleText(names: readonly string[], parents: readonly number[][], component: readonly number[]): string {
  const inComponent = new Set(component);
  const byName = (a: number, b: number): number => byCodePoint(names[a], names[b]);
  const start = [...component].sort(byName)[0];
  const hops = (v: number): number[] => parents[v].filter((w) => inComponent.has(w)).sort(byName);

  const visited = new Set<number>([start]);
  const path: Array<{ node: number; next: number[]; at: number }> = [{ node: start, next: hops(start), at: 0 }];
  while (path.length > 0) {
    const top = path[path.length - 1];
    if (top.at >= top.next.length) {
      path.pop();
      continue;
    }
    const w = top.next[top.at++];
    if (w === start) break;
    if (visited.has(w)) continue;
    visited.add(w);
    path.push({ node: w, next: hops(w), at: 0 });
  }
  return [...path.map((f) => names[f.node]), names[start]].join(' -> ');
}
