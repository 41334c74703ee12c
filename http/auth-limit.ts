/**
 * A per-address limit on failed authentication (API tokens and the console's
 * sign-in): after MAX_FAILURES failures within WINDOW_MS, further failures
 * from that address answer 429 with `Retry-After` until the window ends. Only
 * failures count and only failures are refused: a request with a valid token
 * is served whatever its address did, so clients behind one address (or the
 * tests on localhost) are never locked out by someone else's typos.
 */
import { HttpError } from './http-error.js';

export const MAX_AUTH_FAILURES = 20;
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Addresses tracked at once; the oldest window is dropped past this (a flood of addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;

interface Window {
  readonly start: number;
  failures: number;
}

export class AuthFailureLimiter {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly max = MAX_AUTH_FAILURES,
    private readonly windowMs = AUTH_FAILURE_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records a failure from `address`; returns the 429 to answer instead of
   * the 401 once the address is over the limit, else undefined.
   */
  fail(address: string | undefined): HttpError | undefined {
    const key = address ?? '-';
    const now = this.now();
    let w = this.#windows.get(key);
    if (w === undefined || now - w.start >= this.windowMs) {
      this.#windows.delete(key);
      if (this.#windows.size >= MAX_ADDRESSES) this.#windows.delete(this.#windows.keys().next().value!);
      w = { start: now, failures: 0 };
      this.#windows.set(key, w);
    }
    w.failures++;
    if (w.failures <= this.max) return undefined;
    const retryAfter = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    return new HttpError(429, 'too_many_requests', `too many failed authentication attempts from this address: ${this.max} in ${this.windowMs / 1000} s; retry in ${retryAfter} s`, undefined, { retryAfter });
  }
}
