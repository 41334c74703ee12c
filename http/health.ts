/**
 * What `/health` reports about the state store: whether a small read
 * answers, and how fast. The read is the store's `ping` (a bounded read of
 * the executions table, which every run and read uses: a lock on it shows
 * here; on PostgreSQL on a session of its own, so a busy pool does not hide
 * a healthy database). Probes are shared: one runs at a time and
 * its answer serves the requests of the next PROBE_REUSE_MS, so a load of
 * `/health` is not a load on the store.
 */
import type { StateStore } from '../engine/state/store.js';

/** A read slower than this makes the daemon unhealthy (`503`). */
export const STORE_PROBE_TIMEOUT_MS = 1000;
/** How long one probe's answer is reused. */
const PROBE_REUSE_MS = 500;

export interface StoreHealth {
  readonly reachable: boolean;
  /** Milliseconds the probe's read took; null when it did not answer in time or failed. */
  readonly latency_ms: number | null;
  readonly error?: string;
}

export class StoreProbe {
  #last: { readonly at: number; readonly health: StoreHealth } | undefined;
  #inFlight: { readonly started: number; readonly done: Promise<StoreHealth> } | undefined;

  constructor(
    private readonly store: Pick<StateStore, 'ping'>,
    private readonly timeoutMs = STORE_PROBE_TIMEOUT_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async check(): Promise<StoreHealth> {
    const now = this.now();
    if (this.#last && now - this.#last.at < PROBE_REUSE_MS) return this.#last.health;
    this.#inFlight ??= this.#start(now);
    const { started, done } = this.#inFlight;
    // A probe still waiting past the bound answers "unreachable" at once; later requests do not queue behind it.
    const left = started + this.timeoutMs - now;
    if (left <= 0) return this.#slow();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<StoreHealth>((resolve) => (timer = setTimeout(() => resolve(this.#slow()), left)));
    try {
      return await Promise.race([done, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #slow(): StoreHealth {
    return { reachable: false, latency_ms: null, error: `no answer to a read within ${this.timeoutMs} ms` };
  }

  #start(started: number) {
    const done = this.store.ping(this.timeoutMs).then(
      (): StoreHealth => ({ reachable: true, latency_ms: Math.round((this.now() - started) * 10) / 10 }),
      (err: unknown): StoreHealth => ({ reachable: false, latency_ms: null, error: `a read failed: ${err instanceof Error ? err.message : String(err)}` }),
    ).then((health) => {
      const late = this.now() - started > this.timeoutMs;
      const final = late && health.reachable ? { ...health, reachable: false, error: `a read took ${health.latency_ms} ms (over ${this.timeoutMs} ms)` } : health;
      this.#last = { at: this.now(), health: final };
      this.#inFlight = undefined;
      return final;
    });
    return { started, done };
  }
}
