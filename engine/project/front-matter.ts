/**
 * Front-matter at the top of a model file, in three styles:
 * `/** yaml **\/`, `/* { … } *\/` and consecutive `-- { … }` lines. Returns
 * the config mapping (or null when the file has none) and the body with the
 * block and exactly one following newline removed.
 */
import { yamlLib } from '../yaml-lib.js';
import { EngineError } from '../errors.js';
import { yamlErrorDetail } from './yaml-error.js';

export interface FrontMatter {
  /** null when the file has no front-matter; `{}` for an empty one. */
  readonly config: Record<string, unknown> | null;
  readonly body: string;
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function dropOneNewline(s: string): string {
  if (s.startsWith('\r\n')) return s.slice(2);
  if (s.startsWith('\n')) return s.slice(1);
  return s;
}

/**
 * Parsed front-matter by its text. Models of a project repeat a handful of
 * front-matter blocks (`mode: view` and a tag), and parsing one with the
 * yaml library cost ≈65 µs — 17 % of a cold compile of 10,000 generated
 * models. Models with the same text share one deeply frozen value (and so
 * one merged config, load.ts). Only successful parses are kept: an error is
 * always parsed (and reported) anew.
 */
const parsed = new Map<string, unknown>();
const MAX_PARSED = 4096;

function parseYaml(text: string): unknown {
  let value = parsed.get(text);
  if (value !== undefined || parsed.has(text)) return value;
  value = deepFreeze(yamlLib().parse(text));
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(text, value);
  return value;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

function tryMapping(text: string): Record<string, unknown> | null {
  const t = text.trim();
  // `-- {{ config(...) }}` is a Jinja expression in a comment, not a mapping
  // (YAML would read it as one with a mapping as its key).
  if (!t.startsWith('{') || /^\{[{%#]/.test(t)) return null;
  try {
    const v = parseYaml(text);
    return isMapping(v) ? v : null;
  } catch {
    return null;
  }
}

export function parseFrontMatter(name: string, source: string): FrontMatter {
  const start = source.length - source.trimStart().length;
  const rest = source.slice(start);
  if (rest.startsWith('/**')) {
    const end = rest.indexOf('**/', 3);
    if (end >= 0) {
      const yamlText = rest.slice(3, end);
      let value: unknown;
      try {
        value = yamlText.trim() === '' ? {} : parseYaml(yamlText);
      } catch (err) {
        throw new EngineError('load', `model '${name}': could not parse YAML frontmatter: ${yamlErrorDetail(err)}`);
      }
      if (value === null || value === undefined) value = {};
      if (!isMapping(value)) throw new EngineError('load', `model '${name}': could not parse YAML frontmatter: expected a mapping, got ${Array.isArray(value) ? 'a list' : typeof value}`);
      return { config: value, body: dropOneNewline(rest.slice(end + 3)) };
    }
  }
  if (rest.startsWith('/*')) {
    const end = rest.indexOf('*/', 2);
    if (end >= 0) {
      const m = tryMapping(rest.slice(2, end));
      if (m) return { config: m, body: dropOneNewline(rest.slice(end + 2)) };
    }
    return { config: null, body: source };
  }
  if (rest.startsWith('--')) {
    const parts: string[] = [];
    let pos = 0;
    while (pos < rest.length && rest.startsWith('--', pos)) {
      const nl = rest.indexOf('\n', pos);
      const lineEnd = nl < 0 ? rest.length : nl;
      let line = rest.slice(pos + 2, lineEnd).replace(/\r$/, '');
      if (line.startsWith(' ')) line = line.slice(1);
      parts.push(line);
      if (nl < 0) {
        pos = rest.length;
        break;
      }
      pos = nl; // at the newline; the next line must start right after it
      if (!rest.startsWith('--', nl + 1)) break;
      pos = nl + 1;
    }
    const m = tryMapping(parts.join('\n'));
    if (m) return { config: m, body: dropOneNewline(rest.slice(pos)) };
  }
  return { config: null, body: source };
}
