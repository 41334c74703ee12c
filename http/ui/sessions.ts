/**
 * Server-side sessions of the web console. Signing in exchanges a project
 * token for a random session id (the cookie holds only that id; the token is
 * never stored or rendered). A session carries its project, the token's
 * digest (checked again on every request, so a revoked token ends its
 * sessions), and the CSRF token its forms carry. It ends at sign-out, after
 * `idleMs` without a request, or `maxMs` after sign-in — whichever comes
 * first. Sessions live in the daemon's memory: a restart signs everyone out.
 *
 * The clock is injected so expiry is tested without sleeping.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface Session {
  readonly id: string;
  readonly projectId: string;
  readonly tokenDigest: string;
  readonly csrf: string;
  readonly created: number;
  lastSeen: number;
}

export interface SessionOptions {
  readonly idleMs?: number;
  readonly maxMs?: number;
  readonly now?: () => number;
}

export const DEFAULT_IDLE_MS = 2 * 60 * 60 * 1000;
export const DEFAULT_MAX_MS = 12 * 60 * 60 * 1000;

export const randomId = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Constant-time comparison of two secrets given as strings. */
export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a === '' || b === '') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly idleMs: number;
  readonly maxMs: number;
  readonly #now: () => number;

  constructor(options: SessionOptions = {}) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.maxMs = options.maxMs ?? DEFAULT_MAX_MS;
    this.#now = options.now ?? Date.now;
  }

  create(projectId: string, tokenDigest: string): Session {
    this.#sweep();
    const t = this.#now();
    const s: Session = { id: randomId(), projectId, tokenDigest, csrf: randomId(), created: t, lastSeen: t };
    this.#sessions.set(s.id, s);
    return s;
  }

  /** The live session for a cookie value (its idle time restarts), or undefined. */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const s = this.#sessions.get(id);
    if (!s) return undefined;
    const t = this.#now();
    if (t - s.lastSeen > this.idleMs || t - s.created > this.maxMs) {
      this.#sessions.delete(id);
      return undefined;
    }
    s.lastSeen = t;
    return s;
  }

  delete(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Drops expired sessions (on each sign-in, so the map cannot grow without bound). */
  #sweep(): void {
    const t = this.#now();
    for (const [id, s] of this.#sessions) if (t - s.lastSeen > this.idleMs || t - s.created > this.maxMs) this.#sessions.delete(id);
  }
}
