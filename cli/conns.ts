/**
 * `service conns list` and `service conns test NAME` on this machine's
 * connections (the project `env.yaml` in the working directory,
 * `~/.service/env.yaml`, URL environment variables). A database test opens a
 * connection with a 10 s timeout and runs `select 1`.
 */
import { join } from 'node:path';
import { loadConnections } from '../engine/connections/index.js';
import { testConnection } from '../engine/connections/test-connection.js';
import type { Io } from './io.js';


function registry() {
  return loadConnections({ projectEnvFile: join(process.cwd(), 'env.yaml') });
}

export function connsList(io: Io, json: boolean): number {
  const rows = registry().list();
  if (json) {
    io.out(JSON.stringify(rows) + '\n');
    return 0;
  }
  const header = ['NAME', 'TYPE', 'KIND', 'SOURCE'];
  const table = [header, ...rows.map((r) => [r.name, r.type, r.kind, r.source])];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  io.out(table.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('   ').trimEnd()).join('\n') + '\n');
  return 0;
}

export async function connsTest(name: string, io: Io): Promise<number> {
  const reg = registry();
  const conn = reg.get(name);
  if (!conn) {
    io.err(`fatal: connection ${name} not found\n`);
    return 1;
  }
  const result = await testConnection(conn, reg);
  if (!result.valid) {
    io.err(`fatal: ${result.error}\n`);
    return 1;
  }
  io.out(`Connection ${conn.name}: valid\n`);
  return 0;
}
