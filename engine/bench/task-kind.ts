/**
 * What each synthetic node of `service bench dag` does: `noop` (pure
 * orchestration cost), `sleep:<ms>` (I/O-like wait), `cpu:<ms>` (a busy loop
 * on the worker thread), `sql` (one statement on a named connection).
 */
import { EngineError } from '../errors.js';

export type BenchTaskKind =
  | { readonly kind: 'noop' }
  | { readonly kind: 'sleep'; readonly ms: number }
  | { readonly kind: 'cpu'; readonly ms: number }
  | { readonly kind: 'sql' };

export function parseTaskKind(text: string): BenchTaskKind {
  if (text === 'noop' || text === 'sql') return { kind: text };
  const m = /^(sleep|cpu):(\d+(?:\.\d+)?)$/.exec(text);
  if (m) return { kind: m[1] as 'sleep' | 'cpu', ms: Number(m[2]) };
  throw new EngineError('usage', `--task must be noop, sleep:<ms>, cpu:<ms> or sql, got '${text}'`);
}

export function formatTaskKind(k: BenchTaskKind): string {
  return k.kind === 'sleep' || k.kind === 'cpu' ? `${k.kind}:${k.ms}` : k.kind;
}
