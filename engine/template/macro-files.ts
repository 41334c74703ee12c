/**
 * Macro files as dbt reads them: a file contributes only its macros
 * (`{% macro %}` and `{% test %}` blocks). Text around them — licence
 * headers, prose, comments — is never rendered into a model or a schema
 * name, and other top-level statements do not run. dbt behaves the same.
 *
 * Callers join the macro files a model sees into one prefix string
 * (TemplateEngine.render); `markMacroFile` puts the file's path in front of
 * its text as a Jinja comment, so each file is parsed on its own here and a
 * syntax error names that file and its own line.
 */
import { EngineError } from '../errors.js';
import { compileAst, type CompiledModule } from './jinja-compiler.js';
import { jinjaParser } from './jinja-parser.js';
import { nunjucksInternals, type NjNode, type NjTemplateError } from './nunjucks-internals.js';

const MARK = '{# @macro-file ';
const MARK_END = ' #}';

/** `text` of macro file `path`, marked for a prefix (the mark is a Jinja comment: it renders as nothing). */
export function markMacroFile(path: string, text: string): string {
  return `${MARK}${path.replace(/#/g, '%23').replace(/\n/g, ' ')}${MARK_END}${text}`;
}

interface MacroFile {
  readonly path: string | undefined;
  readonly text: string;
}

/** The files of a prefix; text before the first mark (or a prefix without marks) is one file without a path. */
export function splitMacroFiles(prefix: string): MacroFile[] {
  const files: MacroFile[] = [];
  let at = prefix.indexOf(MARK);
  if (at !== 0) files.push({ path: undefined, text: at < 0 ? prefix : prefix.slice(0, at) });
  while (at >= 0) {
    const pathEnd = prefix.indexOf(MARK_END, at + MARK.length);
    const path = prefix.slice(at + MARK.length, pathEnd);
    const next = prefix.indexOf(MARK, pathEnd + MARK_END.length);
    files.push({ path, text: prefix.slice(pathEnd + MARK_END.length, next < 0 ? undefined : next) });
    at = next;
  }
  return files;
}

/** The macros of every file of `prefix`, compiled as one module; a syntax error names its file and line. */
export function compileMacroFiles(prefix: string, modelName: string): CompiledModule {
  const { nodes } = nunjucksInternals();
  const macros: NjNode[] = [];
  for (const file of splitMacroFiles(prefix)) {
    let root: NjNode;
    try {
      root = jinjaParser().parse(file.text);
    } catch (err) {
      throw parseError(file.path, modelName, err);
    }
    for (const node of root.children as NjNode[]) {
      if (node.typename !== 'Macro') continue;
      // Read by jinja-macro.ts: a render error inside the macro names this file.
      if (file.path !== undefined) node.file = file.path;
      macros.push(node);
    }
  }
  try {
    return compileAst(new nodes.Root(0, 0, macros), modelName);
  } catch (err) {
    throw parseError(undefined, modelName, err);
  }
}

function parseError(path: string | undefined, modelName: string, err: unknown): EngineError {
  const e = err as NjTemplateError;
  const message = (err instanceof Error ? err.message : String(err)).split('\n').pop()!.trim().replace(/^(?:parse\w*|assertType|compile\w*): /, '');
  const where = e.lineno === undefined ? '' : `:${e.lineno}${e.colno === undefined ? '' : `:${e.colno}`}`;
  if (path !== undefined) return new EngineError('compile', `could not parse macro file ${path}${where}: ${message}`);
  return new EngineError('compile', `could not parse the macros of model '${modelName}'${where}: ${message}`);
}
