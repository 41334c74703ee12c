/**
 * The PostgreSQL state store's health read (StateStore.ping): one read of
 * the executions table on a connection of its own, so a check is never
 * queued behind the pool's work and the pool's work never waits for a check.
 * The read blocks like real work would when the table is locked, which is
 * what a health check should notice. The server stops it at the bound
 * (`statement_timeout`), so checks never pile up on the connection; callers
 * arriving while one is in flight share it. A lost connection is reopened by
 * the next check.
 */
import { OwnSession } from '../targets/postgres/own-session.js';
import { EngineError } from '../errors.js';

export class PgPinger {
  #inFlight: Promise<void> | undefined;
  #ms = 1000;
  readonly #session: OwnSession;

  constructor(url: string) {
    this.#session = new OwnSession(() => ({ connectionString: url, application_name: 'service health', connectionTimeoutMillis: this.#ms, keepAlive: true }));
  }

  async ping(timeoutMs: number): Promise<number> {
    if (this.#session.closed) throw new EngineError('connection', 'state store closed');
    const start = performance.now();
    const ms = Math.max(1, Math.round(timeoutMs));
    this.#inFlight ??= this.#read(ms).finally(() => (this.#inFlight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EngineError('connection', `state store did not answer a read within ${ms} ms`)), ms);
    });
    try {
      await Promise.race([this.#inFlight, late]);
    } finally {
      clearTimeout(timer);
    }
    return performance.now() - start;
  }

  async #read(ms: number): Promise<void> {
    try {
      this.#ms = ms;
      const client = await this.#session.client();
      // A number, not user input: safe to inline, and one round trip for both statements.
      await client.query(`SET statement_timeout = ${ms}; SELECT 1 FROM executions LIMIT 1`);
    } catch (err) {
      if (err instanceof EngineError) throw err;
      // 57014: the server's statement_timeout stopped the read — the same finding as our timer's.
      if ((err as { code?: string }).code === '57014') throw new EngineError('connection', `state store did not answer a read within ${ms} ms`, err);
      throw new EngineError('connection', `state store unreachable: ${(err as Error).message}`, err);
    }
  }

  async close(): Promise<void> {
    await this.#session.close();
  }
}
