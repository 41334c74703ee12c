/**
 * A cluster of real daemon processes (`bin/service.js serve`) on loopback,
 * sharing one fresh PostgreSQL state database; a second fresh database is the
 * project's WAREHOUSE. Each node has its own data directory (its local copy
 * of the project files and its own env file). Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { main } from '../../cli/main.js';
import { BIN } from './daemon-child.js';
import { createTempDatabase, type TempDatabase } from './pg.js';

export interface Node {
  readonly dataDir: string;
  child: ChildProcess | undefined;
  url: string;
  exited: Promise<number | null>;
  log: string;
}

async function cli(...argv: string[]): Promise<string> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  assert.equal(code, 0, `${argv.join(' ')}: ${err}`);
  return out.trim();
}

export interface ClusterOptions {
  readonly nodes: number;
  /** SERVICE_LEASE_SECONDS of every daemon. */
  readonly leaseSeconds: number;
  readonly maxRunning?: number;
}

export class TestCluster {
  readonly nodes: Node[] = [];
  projectId = '';
  token = '';
  operatorToken = '';
  #state!: TempDatabase;
  #warehouse!: TempDatabase;
  readonly #admin: pg.Client[] = [];

  private constructor(readonly options: ClusterOptions) {}

  static async create(options: ClusterOptions): Promise<TestCluster> {
    const c = new TestCluster(options);
    c.#state = await createTempDatabase('svc_cluster_state');
    c.#warehouse = await createTempDatabase('svc_cluster_wh');
    const first = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
    c.projectId = await cli('project', 'create', 'acme', '--state', c.#state.url, '--data-dir', first);
    c.token = await cli('token', 'create', '--project', 'acme', '--state', c.#state.url, '--data-dir', first);
    c.operatorToken = await cli('cluster', 'token', '--state', c.#state.url, '--label', 'tests');
    for (let i = 0; i < options.nodes; i++) {
      const dataDir = i === 0 ? first : mkdtempSync(join(tmpdir(), 'svc-cluster-'));
      // The env file is per daemon (connections and secrets stay on each host).
      mkdirSync(join(dataDir, 'projects', c.projectId), { recursive: true });
      writeFileSync(join(dataDir, 'projects', c.projectId, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${c.#warehouse.url}\n`);
      c.nodes.push({ dataDir, child: undefined, url: '', exited: Promise.resolve(null), log: '' });
    }
    return c;
  }

  get stateUrl(): string {
    return this.#state.url;
  }

  get warehouse(): TempDatabase {
    return this.#warehouse;
  }

  /** Starts node `i`'s daemon and waits until it listens. */
  async start(i: number, env: Record<string, string> = {}): Promise<Node> {
    const node = this.nodes[i]!;
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', node.dataDir, '--state', this.#state.url, '--port', '0', '--max-running', String(this.options.maxRunning ?? 4), '--grace-period', '2s'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SERVICE_LEASE_SECONDS: String(this.options.leaseSeconds), ...env },
    });
    node.child = child;
    node.log = '';
    node.exited = new Promise((r) => child.on('exit', (code) => r(code)));
    node.url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (b: Buffer) => {
        node.log += b.toString();
        const m = /listening on (http:\/\/[^\s]+)/.exec(node.log);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`daemon ${i} exited before listening:\n${node.log}`)));
    });
    return node;
  }

  async kill(i: number): Promise<void> {
    const node = this.nodes[i]!;
    node.child?.kill('SIGKILL');
    await node.exited;
    node.child = undefined;
  }

  async stop(i: number): Promise<void> {
    const node = this.nodes[i]!;
    node.child?.kill('SIGTERM');
    await node.exited;
    node.child = undefined;
  }

  /** A client of node `i` with the project token. */
  api(i: number) {
    const url = () => this.nodes[i]!.url;
    const headers = { Authorization: `Service-Project-Token ${this.token}`, 'Content-Type': 'application/json' };
    return {
      post: async (path: string, body: unknown): Promise<any> => {
        const res = await fetch(url() + path, { method: 'POST', headers, body: JSON.stringify(body) });
        const json = await res.json();
        if (res.status !== 200) throw new Error(`${path} → ${res.status} ${JSON.stringify(json)}`);
        return json;
      },
      get: async (path: string): Promise<any> => {
        const res = await fetch(url() + path, { headers });
        const json = await res.json();
        if (res.status !== 200) throw new Error(`${path} → ${res.status} ${JSON.stringify(json)}`);
        return json;
      },
      exec: async (id: string): Promise<any> => {
        const res = await fetch(`${url()}/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: id }))}`, { headers });
        return ((await res.json()) as any).executions[0];
      },
    };
  }

  /** A query on the state database (`state`) or the warehouse. */
  async sql(where: 'state' | 'warehouse', text: string, params: unknown[] = []): Promise<any[]> {
    const c = new pg.Client({ connectionString: where === 'state' ? this.#state.url : this.#warehouse.url });
    c.on('error', () => {}); // a session terminated by a test must fail its query, not the test process
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  }

  /** Node index of the daemon (by its registered pid) that claimed an execution; -1 when none of ours. */
  async nodeOf(execId: string): Promise<number> {
    const rows = await this.sql('state', 'SELECT d.pid FROM executions e JOIN daemons d ON d.id = e.claimed_by WHERE e.exec_id = $1', [execId]);
    if (rows.length === 0) return -1;
    return this.nodes.findIndex((n) => n.child?.pid === rows[0].pid);
  }

  /** Active backends of an execution in the warehouse (found by their session tag). */
  async backends(execId: string): Promise<number> {
    const rows = await this.sql('warehouse', "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", [`service exec ${execId}`]);
    return rows[0].n;
  }

  async close(): Promise<void> {
    for (let i = 0; i < this.nodes.length; i++) if (this.nodes[i]!.child) await this.kill(i);
    for (const c of this.#admin) await c.end().catch(() => {});
    await this.#state?.drop();
    await this.#warehouse?.drop();
    for (const n of this.nodes) rmSync(n.dataDir, { recursive: true, force: true });
  }
}

/** Polls every 50 ms until `probe` gives a value, failing after `ms` with `what`. */
export async function until<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
