/**
 * Where in the model file a SQL error points. Both targets' errors end with
 * the offending line of the statement (`LINE 6:   nosuchcol as c` and a
 * caret; the PostgreSQL driver adds it from the error's position, DuckDB
 * writes it itself). The statement is the compiled SQL wrapped in DDL, so its
 * line number is not the file's: the line's text is looked up in the model
 * file (a line that templating left as written is found there) and else in
 * the compiled SQL, which `service build compile` prints.
 */
import { readFileSync } from 'node:fs';
import type { CompiledNode } from '../../engine/compile/compile.js';
import type { ResultRecord } from '../../engine/build-plan/run-output.js';

const LINE = /\nLINE (\d+): (.*)$/m;

/** The statement line the error names and its text, from the last `LINE n:` of the message. */
export function statementLine(error: string): { line: number; text: string } | undefined {
  const all = [...error.matchAll(new RegExp(LINE.source, 'gm'))];
  const m = all.at(-1);
  if (!m) return undefined;
  // DuckDB and psql cut long lines with `...` at either end.
  return { line: Number(m[1]), text: m[2]!.replace(/^\.\.\./, '').replace(/\.\.\.$/, '').trim() };
}

/** 1-based numbers of the lines of `text` that hold `needle` (trimmed), when it is non-trivial. */
function linesHolding(text: string, needle: string): number[] {
  if (needle.length < 3) return [];
  const out: number[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.includes(needle)) out.push(i + 1);
  });
  return out;
}

/**
 * `at marts/bad.sql:5` (the file's line), or `at marts/bad.sql, compiled SQL
 * line 3 (service build compile … -s bad shows it)`, or undefined when the
 * error names no line or the node is not a model.
 */
export function locateSqlError(error: string, node: CompiledNode | undefined, compileHint: string): string | undefined {
  const at = statementLine(error);
  if (at === undefined || node === undefined || node.kind !== 'model') return undefined;
  const file = node.source.rel;
  let source = '';
  try {
    source = readFileSync(node.source.abs, 'utf8');
  } catch {
    // the file changed since the run read it: fall back to the compiled SQL
  }
  const inSource = linesHolding(source, at.text);
  if (inSource.length === 1) return `at ${file}:${inSource[0]}`;
  const inCompiled = linesHolding(node.sql, at.text);
  if (inCompiled.length === 1) return `at ${file}, compiled SQL line ${inCompiled[0]} (${compileHint} shows the compiled SQL)`;
  return `at ${file}, statement line ${at.line} (${compileHint} shows the compiled SQL)`;
}

/** The compiled model of a failed record: by its full name, else by the model name its error names. */
export function nodeOfRecord(r: ResultRecord, nodes: readonly CompiledNode[]): CompiledNode | undefined {
  const byName = nodes.find((n) => n.kind === 'model' && n.source.naming.fullName === r.name);
  if (byName) return byName;
  const named = /model '([^']+)'/.exec(r.error)?.[1];
  return named === undefined ? undefined : nodes.find((n) => n.kind === 'model' && n.name === named);
}
