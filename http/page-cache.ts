/**
 * Serialized response bodies that are provably fresh: each is stored with
 * the state store's change token (StateStore.changeToken) read before the
 * query that produced it, and served only while the store still returns that
 * token. Any write of the store, or a commit by another connection or
 * process, changes the token and so drops every entry at once. A store
 * without a token (PostgreSQL, or inside a transaction) caches nothing.
 *
 * Only for answers that are a pure function of the stored state and the key
 * (no clock, no file system): `GET /execution/list` pages. The body is kept
 * as the bytes that were sent, so a hit and a miss answer identically.
 */
export interface PageCacheOptions {
  /** Most entries kept for one token (oldest dropped first). */
  readonly maxEntries?: number;
  /** Most bytes kept for one token; a bigger body is not kept at all. */
  readonly maxBytes?: number;
}

export class PageCache {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #token: string | undefined;
  #bytes = 0;
  readonly #entries = new Map<string, Buffer>();

  constructor(options: PageCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 64;
    this.#maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  }

  /**
   * The body stored under `key` with exactly this `token`, else undefined.
   * A token other than the stored one makes every entry stale: they are dropped.
   */
  get(token: string | undefined, key: string): Buffer | undefined {
    if (token === undefined) return undefined;
    if (token !== this.#token) {
      this.#reset(token);
      return undefined;
    }
    return this.#entries.get(key);
  }

  /**
   * Stores `body` under `key` for `token` (the token read before the query
   * that produced it) and returns it.
   */
  put(token: string | undefined, key: string, body: Buffer): Buffer {
    if (token === undefined || body.length > this.#maxBytes) return body;
    // A newer token was seen since this value's query began: the value may already be stale.
    if (token !== this.#token) {
      if (this.#token !== undefined) return body;
      this.#reset(token);
    }
    const old = this.#entries.get(key);
    if (old) {
      this.#bytes -= old.length;
      this.#entries.delete(key);
    }
    while (this.#entries.size > 0 && (this.#entries.size >= this.#maxEntries || this.#bytes + body.length > this.#maxBytes)) {
      const [oldest, b] = this.#entries.entries().next().value as [string, Buffer];
      this.#entries.delete(oldest);
      this.#bytes -= b.length;
    }
    this.#entries.set(key, body);
    this.#bytes += body.length;
    return body;
  }

  get size(): number {
    return this.#entries.size;
  }

  #reset(token: string): void {
    this.#token = token;
    this.#entries.clear();
    this.#bytes = 0;
  }
}
