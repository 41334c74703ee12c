/**
 * Queries during template rendering (`run_query`, `adapter.get_relation`,
 * `{% call statement %}`): templates render synchronously, so each query
 * runs in a short-lived child process (sync-query-child.ts) that this
 * thread waits for. A child process rather than a worker thread: a worker
 * loading TypeScript through the loader hooks needs this thread, which is
 * blocked while it waits. A project that never queries at compile time
 * starts no process and opens no connection; on DuckDB the child has closed
 * the file before the run opens it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Connection } from '../../connections/index.js';
import { EngineError } from '../../errors.js';

export interface QueryTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

const IS_TS = import.meta.url.endsWith('.ts');
const TIMEOUT_MS = 300_000;

export class SyncQuery {
  constructor(private readonly connection: Connection) {}

  query(sql: string): QueryTable {
    const child = fileURLToPath(new URL(IS_TS ? './sync-query-child.ts' : './sync-query-child.js', import.meta.url));
    const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
    const args = [...(IS_TS ? (hasTsx ? process.execArgv : ['--import', 'tsx']) : []), child];
    const r = spawnSync(process.execPath, args, { input: JSON.stringify({ connection: this.connection, sql }), encoding: 'utf8', timeout: TIMEOUT_MS, maxBuffer: 512 * 1024 * 1024 });
    if (r.error) throw new EngineError('compile', `query failed: ${r.error.message}`);
    let reply: { ok: boolean; error?: string; columns?: string[]; rows?: unknown[][] };
    try {
      reply = JSON.parse(r.stdout) as typeof reply;
    } catch {
      throw new EngineError('compile', `query failed: ${(r.stderr || r.stdout || `exit ${String(r.status)}`).trim().split('\n')[0]}`);
    }
    if (!reply.ok) throw new EngineError('compile', `query failed: ${reply.error}`);
    return { columns: reply.columns ?? [], rows: reply.rows ?? [] };
  }

  /** Nothing stays open between queries. */
  close(): void {}
}
