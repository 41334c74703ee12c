/**
 * Save-time checks of pipeline expressions and templates:
 * every `if`/`check`/`loop` expression and every `{…}` template in a step's
 * strings must parse with the runner's parser, and `file://` values inside
 * step strings must name existing project files. Problems sit on the value
 * that holds the text; the detail's offset is inside the expression.
 */
import { ExpressionError, parseExpression } from './expression.js';
import type { Scope } from './fields.js';
import { checkProjectFile, fileRefPath } from './file-ref.js';
import type { PathSeg } from './problem.js';
import { MAX_EXPRESSION_LENGTH, templateParts } from './template.js';
import type { YNode } from './yaml-tree.js';

function report(s: Scope, err: unknown, path: readonly PathSeg[], offset: number): void {
  if (err instanceof ExpressionError) s.problems.add(path, err.message, offset);
  else throw err;
}

/** Parses `text` as one expression; reports and returns false when it does not parse. */
export function checkExpression(s: Scope, text: string, path: readonly PathSeg[], offset: number): boolean {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    s.problems.add(path, `expression is ${text.length} characters long; the limit is ${MAX_EXPRESSION_LENGTH}`, offset);
    return false;
  }
  try {
    parseExpression(text);
    return true;
  } catch (err) {
    report(s, err, path, offset);
    return false;
  }
}

/** Parses every `{…}` expression of a template string. */
export function checkTemplate(s: Scope, text: string, path: readonly PathSeg[], offset: number): void {
  if (!text.includes('{')) return;
  for (const part of templateParts(text)) {
    if (part.kind === 'expr') checkExpression(s, part.source, path, offset);
  }
}

/**
 * Walks a step value: templates in every string and, when `fileRefs`,
 * `file://` references checked for existence. Keys of nested mappings are
 * not templates.
 */
export function checkStrings(s: Scope, node: YNode, path: readonly PathSeg[], fileRefs: boolean): void {
  if (node.kind === 'scalar') {
    if (typeof node.value !== 'string') return;
    checkTemplate(s, node.value, path, node.offset);
    const file = fileRefs ? fileRefPath(node.value) : undefined;
    if (file !== undefined) checkProjectFile(s, file, path, node.offset);
  } else if (node.kind === 'seq') {
    node.items.forEach((item, i) => checkStrings(s, item, [...path, i], fileRefs));
  } else {
    for (const e of node.entries) checkStrings(s, e.value, [...path, e.key], fileRefs);
  }
}
