/**
 * What the compiling thread (sync-query.ts) and its helper thread
 * (sync-query-worker.ts) exchange: requests and replies on a MessagePort, and
 * in `state[0]` the sequence number of the last answered request (or DEAD).
 */
import type { MessagePort } from 'node:worker_threads';
import type { Connection } from '../../connections/index.js';
import type { QueryTable } from './query-session.js';

export const DEAD = -1;

export interface SyncQueryData {
  readonly port: MessagePort;
  readonly state: Int32Array;
  readonly connection: Connection;
}

export type SyncQueryRequest = { readonly seq: number; readonly type: 'query'; readonly sql: string } | { readonly seq: number; readonly type: 'close' };
export type SyncQueryReply = ({ readonly ok: true } & Partial<QueryTable>) | { readonly ok: false; readonly error: string };
