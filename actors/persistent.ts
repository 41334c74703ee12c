/**
 * Persistent (never mutated) arrays for the supervisor's state, so one
 * transition costs what it touches instead of a copy of every node's record:
 * with plain arrays a 10,000-node run copied 10,000 records per transition
 * (bench/ micro: 41 µs per transition, O(n²) over the run).
 *
 * Items live in chunks of CHUNK. A `VecDraft` copies the chunk list once
 * and each chunk on its first write; `done()` freezes the result into a new
 * `Vec`. Untouched chunks are shared between versions and never written.
 */
const SHIFT = 6;
const CHUNK = 1 << SHIFT;
const MASK = CHUNK - 1;

export class Vec<T> {
  /** Public so that a deep freeze (the supervisor's tests) reaches them. */
  readonly chunks: readonly (readonly T[])[];
  readonly length: number;

  private constructor(chunks: readonly (readonly T[])[], length: number) {
    this.chunks = chunks;
    this.length = length;
  }

  static of<T>(items: readonly T[]): Vec<T> {
    const chunks: T[][] = [];
    for (let i = 0; i < items.length; i += CHUNK) chunks.push(items.slice(i, i + CHUNK));
    return new Vec(chunks, items.length);
  }

  /** For VecDraft only. */
  static fromChunks<T>(chunks: readonly (readonly T[])[], length: number): Vec<T> {
    return new Vec(chunks, length);
  }

  at(i: number): T {
    return this.chunks[i >> SHIFT]![i & MASK]!;
  }

  toArray(): T[] {
    return this.chunks.flat() as T[];
  }

  edit(): VecDraft<T> {
    return new VecDraft(this);
  }
}

export class VecDraft<T> {
  readonly #chunks: (readonly T[])[];
  readonly #owned: boolean[];
  #length: number;

  constructor(base: Vec<T>) {
    this.#chunks = base.chunks.slice();
    this.#owned = new Array<boolean>(this.#chunks.length).fill(false);
    this.#length = base.length;
  }

  get length(): number {
    return this.#length;
  }

  at(i: number): T {
    return this.#chunks[i >> SHIFT]![i & MASK]!;
  }

  set(i: number, value: T): void {
    this.#writable(i >> SHIFT)[i & MASK] = value;
  }

  push(value: T): void {
    const c = this.#length >> SHIFT;
    if (c === this.#chunks.length) {
      this.#chunks.push([]);
      this.#owned.push(true);
    }
    this.#writable(c).push(value);
    this.#length++;
  }

  done(): Vec<T> {
    return Vec.fromChunks(this.#chunks, this.#length);
  }

  #writable(c: number): T[] {
    if (!this.#owned[c]) {
      this.#chunks[c] = this.#chunks[c]!.slice();
      this.#owned[c] = true;
    }
    return this.#chunks[c] as T[];
  }
}

/**
 * A persistent FIFO: items appended to a Vec, read from `head`. Consumed
 * chunks stay reachable until the queue is drained (then it starts over), which
 * bounds the memory by the run's node count.
 */
export class Queue<T> {
  readonly items: Vec<T>;
  readonly head: number;

  private constructor(items: Vec<T>, head: number) {
    this.items = items;
    this.head = head;
  }

  static empty<T>(): Queue<T> {
    return new Queue(Vec.of<T>([]), 0);
  }

  get size(): number {
    return this.items.length - this.head;
  }

  edit(): QueueDraft<T> {
    return new QueueDraft(this);
  }

  /** For QueueDraft only. */
  static from<T>(items: Vec<T>, head: number): Queue<T> {
    return head === items.length && head > 0 ? Queue.empty() : new Queue(items, head);
  }
}

export class QueueDraft<T> {
  #items: VecDraft<T>;
  #head: number;

  constructor(base: Queue<T>) {
    this.#items = base.items.edit();
    this.#head = base.head;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(value: T): void {
    this.#items.push(value);
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    return this.#items.at(this.#head++);
  }

  /** Drops every queued item. */
  clear(): void {
    this.#items = Vec.of<T>([]).edit();
    this.#head = 0;
  }

  done(): Queue<T> {
    return Queue.from(this.#items.done(), this.#head);
  }
}
