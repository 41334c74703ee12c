/**
 * The yardstick of `service bench dag`: the makespan an ideal orchestrator
 * would reach with the same task durations and the same number of slots —
 * zero dispatch cost, a task starts the instant its last dependency ends and
 * a slot is free (greedy list scheduling in ready order, which is what our
 * supervisor does too). Efficiency = ideal makespan / measured wall time.
 *
 * An event simulation: O((n + e) log n).
 */

class Heap<T> {
  readonly #a: T[] = [];
  constructor(readonly less: (x: T, y: T) => boolean) {}
  get size(): number {
    return this.#a.length;
  }
  push(v: T): void {
    const a = this.#a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(v, a[p]!)) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }
  pop(): T | undefined {
    const a = this.#a;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && this.less(a[r]!, a[l]!) ? r : l;
        if (!this.less(a[c]!, last)) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

interface Timed {
  readonly t: number;
  readonly i: number;
}
const earlier = (x: Timed, y: Timed) => x.t < y.t || (x.t === y.t && x.i < y.i);

/** Longest path through the DAG weighted by `durations` (a lower bound of any schedule). */
export function criticalPath(deps: readonly (readonly number[])[], durations: readonly number[]): number {
  const finish: number[] = [];
  let longest = 0;
  for (let i = 0; i < deps.length; i++) {
    let start = 0;
    for (const p of deps[i]!) start = Math.max(start, finish[p]!);
    finish.push(start + durations[i]!);
    longest = Math.max(longest, finish[i]!);
  }
  return longest;
}

/**
 * Makespan of the greedy schedule on `slots` slots: nodes become ready when
 * their last dependency finishes and start in (ready time, index) order on
 * the first free slot. Deps must point to smaller indexes.
 */
export function idealMakespan(deps: readonly (readonly number[])[], durations: readonly number[], slots: number): number {
  const n = deps.length;
  const children: number[][] = Array.from({ length: n }, () => []);
  const waiting = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    waiting[i] = deps[i]!.length;
    for (const p of deps[i]!) children[p]!.push(i);
  }
  const ready = new Heap<Timed>(earlier);
  const running = new Heap<Timed>(earlier);
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push({ t: 0, i });
  let free = Math.max(1, Math.floor(slots));
  let now = 0;
  for (;;) {
    while (free > 0 && ready.size > 0) {
      const { i } = ready.pop()!;
      running.push({ t: now + durations[i]!, i });
      free--;
    }
    const next = running.pop();
    if (!next) return now;
    now = next.t;
    free++;
    for (const c of children[next.i]!) if (--waiting[c]! === 0) ready.push({ t: now, i: c });
  }
}
