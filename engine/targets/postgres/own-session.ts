/**
 * One PostgreSQL session kept open for a single purpose (a lease renewal, a
 * health read) beside the pools, so that purpose is never queued behind the
 * pools' work. The session is opened on first use; a lost one (an `error` or
 * `end` event, or a failed connect) is forgotten, and the next use opens a
 * new one. Its `error` listener keeps a killed connection from ending the
 * process.
 */
import type pg from 'pg';
import { Client } from './pg-module.js';

export class OwnSession {
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(private readonly config: () => pg.ClientConfig) {}

  get closed(): boolean {
    return this.#closed;
  }

  client(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('session closed'));
    if (this.#client) return this.#client;
    const client = new Client(this.config());
    const forget = () => {
      if (this.#client === opened) this.#client = undefined;
    };
    client.on('error', forget);
    client.on('end', forget);
    const opened = client.connect().then(
      () => client,
      (err: unknown) => {
        forget();
        throw err;
      },
    );
    this.#client = opened;
    return opened;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const c = this.#client;
    this.#client = undefined;
    if (c) await c.then((client) => client.end()).catch(() => {});
  }
}
