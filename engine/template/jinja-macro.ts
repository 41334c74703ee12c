/**
 * Macro definitions with Jinja2's calling rules, compiled in place of
 * nunjucks' `_compileMacro` (whose runtime drops extra positional arguments
 * and never exposes `varargs` / `kwargs`):
 *
 * - positional arguments fill the parameters in order, defaults included;
 * - extra positional arguments are the list `varargs` and unknown keyword
 *   arguments the dict `kwargs` — when the body uses those names, as in
 *   Jinja2; otherwise the call fails naming the macro (Jinja2 raises too);
 * - a parameter given twice (by position and by name) fails;
 * - `caller` is always accepted (`{% call %}` blocks pass it).
 *
 * The generated function keeps nunjucks' frame handling, so a macro body
 * compiles exactly as nunjucks compiles it.
 */
import { callArgs } from './call-args.js';
import { nunjucksInternals, type NjCompiler, type NjFrame, type NjNode } from './nunjucks-internals.js';

/** The compiled body of a macro: `(positional params…, given defaults-or-caller, varargs, extra kwargs)`. */
type MacroBody = (...args: unknown[]) => unknown;

/** The runtime half: turns a call's arguments into the body's parameters (see the file comment). */
export function makeMacro(name: string, argNames: readonly string[], kwargNames: readonly string[], catchVarargs: boolean, catchKwargs: boolean, body: MacroBody) {
  const all = [...argNames, ...kwargNames];
  return function macro(this: unknown, ...args: unknown[]): unknown {
    const { positional, kwargs } = callArgs(args);
    const values: unknown[] = positional.slice(0, argNames.length);
    values.length = argNames.length;
    const given: Record<string, unknown> = {};
    for (let i = argNames.length; i < Math.min(positional.length, all.length); i++) given[all[i]!] = positional[i];
    const varargs = positional.slice(all.length);
    if (varargs.length > 0 && !catchVarargs) throw new TypeError(`macro '${name}' takes not more than ${all.length} argument(s)`);
    const extra: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(kwargs)) {
      const at = all.indexOf(key);
      if (at >= 0 && at < positional.length) throw new TypeError(`macro '${name}' got multiple values for argument '${key}'`);
      if (at >= 0 && at < argNames.length) values[at] = value;
      else if (at >= 0 || key === 'caller') given[key] = value;
      else if (catchKwargs) extra[key] = value;
      else throw new TypeError(`macro '${name}' takes no keyword argument '${key}'`);
    }
    return body.call(this, ...values, given, varargs, extra);
  };
}

/** Where in a macro file an error was raised: set on the error by the innermost macro it passed through. */
const WHERE = Symbol('macro error position');

export function macroError(err: unknown, name: string, file: string, lineno: number, colno: number): unknown {
  if (typeof err === 'object' && err !== null && !(WHERE in err)) {
    (err as Record<symbol, string>)[WHERE] = `in macro '${name}' at ${file}:${lineno + 1}:${colno + 1}`;
  }
  return err;
}

/** `in macro 'm' at <file>:<line>:<column>` when `err` was raised inside a macro of a macro file. */
export function macroErrorAt(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as Record<symbol, string | undefined>)[WHERE] : undefined;
}

/** The compiler members a macro definition needs. */
interface MacroCompiler extends NjCompiler {
  _pushBuffer(): string;
  _popBuffer(): void;
  _emitLines(...lines: string[]): void;
  _withScopedSyntax(fn: () => void): void;
  assertType(node: NjNode, ...types: unknown[]): void;
}

/** True when the body reads `name` (nunjucks' Symbol nodes, nested blocks and callers included). */
function uses(body: NjNode, name: string): boolean {
  const symbols = body.findAll(nunjucksInternals().nodes.Symbol) as NjNode[];
  return symbols.some((s) => s.value === name);
}

/** Emits the definition of macro (or `{% call %}` caller) `node`; returns the id of the JavaScript variable holding it. */
export function compileMacroDefinition(c: MacroCompiler, node: NjNode, frame: NjFrame | undefined): string {
  const { nodes, Frame } = nunjucksInternals();
  const params = (node.args as NjNode).children as NjNode[];
  const last = params[params.length - 1];
  const defaults: NjNode[] = last !== undefined && last instanceof nodes.Dict ? (last.children as NjNode[]) : [];
  const positional = defaults.length > 0 ? params.slice(0, -1) : params;
  for (const p of positional) c.assertType(p, nodes.Symbol);
  const argNames = positional.map((p) => p.value as string);
  const kwargNames = defaults.map((pair) => (pair.key as NjNode).value as string);
  const name = node.name === undefined || node.name === null ? 'caller' : String((node.name as NjNode).value);
  const body = node.body as NjNode;
  const catchVarargs = uses(body, 'varargs');
  const catchKwargs = uses(body, 'kwargs');

  const funcId = `macro_${c._tmpid()}`;
  const keepFrame = frame !== undefined;
  const inner: NjFrame = keepFrame ? frame.push(true) : new Frame();
  const realNames = [...argNames.map((n) => `l_${n}`), 'kwargs', 'l__varargs', 'l__kwargs'];
  c._emitLines(
    `var ${funcId} = jinja.makeMacro(${JSON.stringify(name)}, ${JSON.stringify(argNames)}, ${JSON.stringify(kwargNames)}, ${catchVarargs}, ${catchKwargs}, function (${realNames.join(', ')}) {`,
    'var callerFrame = frame;',
    `frame = ${keepFrame ? 'frame.push(true);' : 'new runtime.Frame();'}`,
    // `return()` leaves a macro by throwing (jinja-runtime.ts): the frame is restored either way.
    'try {',
    'if (Object.prototype.hasOwnProperty.call(kwargs, "caller")) { frame.set("caller", kwargs.caller); }',
  );
  for (const n of argNames) {
    c._emitLine(`frame.set(${JSON.stringify(n)}, l_${n});`);
    inner.set(n, `l_${n}`);
  }
  for (const pair of defaults) {
    const key = JSON.stringify((pair.key as NjNode).value);
    c._emit(`frame.set(${key}, Object.prototype.hasOwnProperty.call(kwargs, ${key}) ? kwargs[${key}] : `);
    c._compileExpression(pair.value as NjNode, inner);
    c._emitLine(');');
  }
  if (catchVarargs) {
    c._emitLine('frame.set("varargs", l__varargs);');
    inner.set('varargs', 'l__varargs');
  }
  if (catchKwargs) {
    c._emitLine('frame.set("kwargs", l__kwargs);');
    inner.set('kwargs', 'l__kwargs');
  }
  const bufferId = c._pushBuffer();
  const file = typeof node.file === 'string' ? node.file : undefined;
  if (file !== undefined) c._emitLine('try {');
  c._withScopedSyntax(() => c.compile(body, inner));
  c._emitLine(`return new runtime.SafeString(${bufferId});`);
  // A macro from a macro file: an error inside it names the macro, its file and line (see macroErrorAt).
  if (file !== undefined) c._emitLine(`} catch (e) { throw jinja.macroError(e, ${JSON.stringify(name)}, ${JSON.stringify(file)}, lineno, colno); }`);
  c._emitLine('} finally { frame = callerFrame; }');
  c._emitLine('});');
  c._popBuffer();
  return funcId;
}
