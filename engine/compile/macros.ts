/**
 * Macro files scoped by folder: a `*.macros.sql` in
 * directory `d` applies to models in `d` and below; root files apply to all.
 * Applicable files are prepended root first (depth, then directory, then
 * file name). The prefix for a directory is built once and shared by every
 * model in it, so 10,000 models cost one concatenation per directory.
 */
import type { Logger } from '../log.js';
import { markMacroFile } from '../template/macro-files.js';
import type { MacroSource } from '../project/load.js';

const MACRO_DEF = /\{%-?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)/g;

const depth = (dir: string) => (dir === '' ? 0 : dir.split('/').length);

function inScope(macroDir: string, modelDir: string): boolean {
  return macroDir === '' || modelDir === macroDir || modelDir.startsWith(`${macroDir}/`);
}

/** The discovery-relative directory of a model file (`rel`): the key `prefixFor` takes. */
export const dirOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

export interface MacroScopes {
  /** The macro text to prepend for a model in discovery-relative directory `dir`. */
  prefixFor(dir: string): string;
}

export function macroScopes(macros: readonly MacroSource[], logger: Logger): MacroScopes {
  const ordered = [...macros].sort((a, b) => depth(a.dir) - depth(b.dir) || cmp(a.dir, b.dir) || cmp(a.file, b.file));
  const defined = ordered.map((m) => [...m.text.matchAll(MACRO_DEF)].map((x) => x[1]!));
  warnShadowing(ordered, defined, logger);
  const cache = new Map<string, string>();
  return {
    prefixFor(dir) {
      let hit = cache.get(dir);
      if (hit === undefined) {
        hit = ordered.filter((m) => inScope(m.dir, dir)).map((m) => markMacroFile(m.file, m.text) + '\n').join('');
        cache.set(dir, hit);
      }
      return hit;
    },
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `macro '<name>' in <fileB> shadows definition in <fileA>` for an ancestor/descendant pair. */
function warnShadowing(ordered: readonly MacroSource[], defined: readonly string[][], logger: Logger): void {
  const firstDef = new Map<string, number[]>();
  ordered.forEach((_, i) => {
    for (const name of defined[i]!) firstDef.set(name, [...(firstDef.get(name) ?? []), i]);
  });
  for (const [name, where] of firstDef) {
    for (let j = 1; j < where.length; j++) {
      for (let i = 0; i < j; i++) {
        const a = ordered[where[i]!]!;
        const b = ordered[where[j]!]!;
        if (a.dir !== b.dir && inScope(a.dir, b.dir)) logger.log('warn', `macro '${name}' in ${b.file} shadows definition in ${a.file}`);
      }
    }
  }
}
