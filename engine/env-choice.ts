/**
 * A setting read from an environment variable that takes one of a few
 * values (case-insensitive). Nothing silent: a value it does not know is
 * named in a warning and the default applies. The warning is given once
 * per variable and value in a process — the daemon compiles again and
 * again, and the same unknown value needs saying once.
 */
import type { Logger } from './log.js';

const warned = new Set<string>();

export interface EnvChoice<T extends string> {
  /** Variable name, e.g. `SERVICE_COMPILE_CACHE`. */
  readonly name: string;
  /** Lower-case value → setting; `''` is the variable unset or empty. */
  readonly values: Readonly<Record<string, T>>;
  /** The setting for an unknown value. */
  readonly fallback: T;
  /** The warning's ending: what was expected, and what applies instead. */
  readonly expected: string;
  readonly instead: string;
}

/** The setting `process.env[c.name]` names; an unknown value is warned about (when `logger` is given) and gives `c.fallback`. */
export function envChoice<T extends string>(c: EnvChoice<T>, logger: Logger | undefined): T {
  const raw = process.env[c.name] ?? '';
  const key = raw.toLowerCase();
  if (Object.hasOwn(c.values, key)) return c.values[key]!;
  const seen = `${c.name}=${raw}`;
  if (logger !== undefined && !warned.has(seen)) {
    warned.add(seen);
    logger.log('warn', `${c.name}: unknown value '${raw}' (expected ${c.expected}); ${c.instead}`);
  }
  return c.fallback;
}
