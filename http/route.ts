/**
 * A route is data: method, path, the body schema (superstruct) and a handler
 * that returns the response body. The same table mounts the router and
 * generates `/openapi.json`, so the contract the server enforces and the one
 * it publishes cannot drift apart.
 */
import type { Context } from 'koa';
import type { Struct } from 'superstruct';

export interface RequestScope {
  readonly ctx: Context;
  /** The token's project (absent on the two public routes). */
  readonly projectId: string;
}

export interface Route<B = unknown> {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly summary: string;
  readonly auth: boolean;
  /** Checks an operator token itself (not a project's): `GET /cluster`. */
  readonly operator?: boolean;
  /** POST body schema; GET routes read query parameters themselves. */
  readonly body?: Struct<B, unknown>;
  /** Documented query parameters (GET). */
  readonly query?: readonly { readonly name: string; readonly required?: boolean; readonly description: string }[];
  readonly handler: (scope: RequestScope, body: B) => Promise<unknown> | unknown;
}

/** Keeps the body type of each route while collecting heterogeneous routes into one table. */
export function route<B>(r: Route<B>): Route<unknown> {
  return r as unknown as Route<unknown>;
}
