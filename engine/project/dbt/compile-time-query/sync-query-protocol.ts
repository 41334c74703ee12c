/**
 * What the compiling thread (sync-query.ts) and its helper thread
 * (sync-query-worker.ts, a BlockingThread whose data is the connection)
 * exchange: one reply per request, in order.
 */
import type { QueryTable } from './query-session.js';

export type SyncQueryRequest = { readonly type: 'query'; readonly sql: string } | { readonly type: 'close' };
export type SyncQueryReply = ({ readonly ok: true } & Partial<QueryTable>) | { readonly ok: false; readonly error: string };
