/**
 * `service build list` output: aligned text columns or a
 * bare JSON array of `{name, type, table, file}`; `table` only with a target.
 */
import { resolvedMode, type CompiledNode } from '../../engine/compile/compile.js';

export interface ListEntry {
  readonly name: string;
  readonly type: string;
  readonly table?: string;
  readonly file: string;
}

export function listEntries(nodes: readonly CompiledNode[], withTarget: boolean, fullRefresh = false): ListEntry[] {
  return nodes.map((n) => ({
    name: n.name,
    type: n.kind === 'seed' ? 'seed' : resolvedMode(n, fullRefresh),
    ...(withTarget ? { table: n.source.naming.fullName } : {}),
    file: n.source.file,
  }));
}

export function listText(entries: readonly ListEntry[]): string {
  if (entries.length === 0) return '';
  const w1 = Math.max(...entries.map((e) => e.name.length));
  const middle = entries.map((e) => e.table ?? e.file);
  const w2 = Math.max(...middle.map((m) => m.length));
  const withTable = entries[0]!.table !== undefined;
  return entries
    .map((e, i) => (withTable ? `${e.name.padEnd(w1)}   ${middle[i]!.padEnd(w2)}   (${e.type})` : `${e.name.padEnd(w1)}   ${e.file}   (${e.type})`))
    .join('\n')
    .concat('\n');
}
