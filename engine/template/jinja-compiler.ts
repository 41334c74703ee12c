/**
 * Compiles Jinja source with nunjucks' parser and a Compiler subclass that
 * emits Jinja semantics where nunjucks emits plain JavaScript operators:
 *
 *   `~`              → jinja.concat (Python's str() of each side)
 *   `+ * %`          → jinja.add/mul/mod (list concatenation, `'-' * 3`, `'%s' % x`)
 *   `==` / `!=`      → `===` / `!==` (JavaScript's `0 == ''` is true, Python's is not)
 *   `(a, b)`         → a list (nunjucks emits the JS comma operator, so `x in ('a', 'b')` tested `'b'` only)
 *   `if` `not` `and` `or` → Python truthiness (an empty list is false)
 *   `obj.attr`       → jinja.member (Python methods: `append`, `items`, `upper`, …)
 *   `{% set ns.a = v %}` → jinja.setAttr (nunjucks parses it but assigns a variable named "undefined")
 *   `{% for x in xs if c %}` → a filtered loop (nunjucks read it as `xs if c` and looped over nothing)
 *   `{% do expr %}`  → evaluates `expr` for its side effects
 *   `xs[1:]`         → jinja.slice (Python slicing; parsed by jinja-parser.ts)
 *   `{k: v}`         → an object with computed keys: `k` is an expression, as in Python
 *   `f(*xs, **kw)`   → spread arguments (`...jinja.iterable(xs)`, `...jinja.mapping(kw)`)
 *   `{{ value }}`    → jinja.str (Python's str(): `[1, 'a']`, `{'k': 1}`, `True`, `None`)
 *   `{% macro %}`    → Jinja2's calling rules with `varargs` / `kwargs` (jinja-macro.ts)
 *
 * It also records each statement's position so render errors name their line.
 *
 * The subclass is used only by `compileJinja`, so nunjucks' shared prototypes
 * stay untouched. The generated module is instantiated with the `jinja`
 * runtime as a closure variable, reachable from macros as well as the root.
 */
import { compileMacroDefinition } from './jinja-macro.js';
import { jinjaParser } from './jinja-parser.js';
import { jinjaRuntime } from './jinja-runtime.js';
import { MARK_CLOSE, MARK_OPEN, positionsOf, templateShape, type TemplateShape } from './template-shape.js';
import { nunjucksInternals, type NjCompiler, type NjFrame, type NjNode, type NjNodeClass } from './nunjucks-internals.js';

const COMPARE: Readonly<Record<string, string>> = { '==': '===', '!=': '!==' };

/** Statements whose position is recorded before they run, so a render error reports its own line. */
const STATEMENTS = new Set(['Output', 'If', 'For', 'Set', 'Do', 'Switch']);

type JinjaCompilerClass = new (templateName: string, throwOnUndefined: boolean) => NjCompiler & { readonly constants: string[] };

let compilerClass: JinjaCompilerClass | undefined;

/** The compiler class, made on first use (when nunjucks is loaded: nunjucks-internals.ts). */
/** Node kinds added at compile time, shared by the compiler layers below. */
interface Kinds {
  readonly Truthy: NjNodeClass;
  readonly LoopFilter: NjNodeClass;
  readonly ForKeys: NjNodeClass;
  /** Generated code as an expression (the items of an unpacking `set`). */
  readonly RawCode: NjNodeClass;
  readonly own: readonly NjNodeClass[];
}

type Layer = new (templateName: string, throwOnUndefined: boolean) => NjCompiler & {
  readonly constants: string[];
  call(fn: string, args: readonly NjNode[], frame: NjFrame): void;
};

/** The compiler class, made on first use (when nunjucks is loaded: nunjucks-internals.ts): data, then operators, then statements. */
function makeCompiler(): JinjaCompilerClass {
  const { nodes: njNodes } = nunjucksInternals();
  const { DoNode, SliceNode, StarArg, DoubleStarArg } = jinjaParser();
  const Truthy = njNodes.Node.extend('Truthy', { fields: ['expr'] });
  const LoopFilter = njNodes.Node.extend('LoopFilter', { fields: ['arr', 'name', 'cond'] });
  const ForKeys = njNodes.Node.extend('ForKeys', { fields: ['expr'] });
  const RawCode = njNodes.Node.extend('RawCode', { fields: ['code'] });
  const kinds: Kinds = { Truthy, LoopFilter, ForKeys, RawCode, own: [Truthy, LoopFilter, ForKeys, RawCode, DoNode, SliceNode, StarArg, DoubleStarArg] };
  return statementLayer(operatorLayer(dataLayer(kinds), kinds), kinds);
}

function wrapCondition(node: NjNode, Truthy: NjNodeClass): void {
  const cond = node.cond as NjNode;
  if (cond.typename !== 'Truthy') node.cond = new Truthy(cond.lineno, cond.colno, cond);
}

/** Literals, dicts, argument unpacking, positions and the `jinja.*` call helper. */
function dataLayer(kinds: Kinds): Layer {
  const { Compiler: NjBaseCompiler } = nunjucksInternals();
  return class DataCompiler extends NjBaseCompiler {
    /** String literals and template text, in emit order: the code reads them from `K`, so templates of one shape share code. */
    readonly constants: string[] = [];
    /** The next literal is a keyword argument's name (an object-literal key in the code): emitted as written. */
    private keyNext = false;

    override compileLiteral(node: NjNode, frame: NjFrame): void {
      if (typeof node.value === 'string' && !this.keyNext) {
        this._emit(`K[${this.constants.push(node.value) - 1}]`);
        return;
      }
      this.keyNext = false;
      super.compileLiteral(node, frame);
    }

    /** A keyword argument `name=value` (dict literals do not come here: see compileDict). */
    override compilePair(node: NjNode, frame: NjFrame): void {
      this.keyNext = true;
      super.compilePair(node, frame);
    }

    /** A dict literal: each key is an expression (`{kk: 1}` keys on the value of `kk`, as in Python). */
    compileDict(node: NjNode, frame: NjFrame): void {
      if (node.typename !== 'Dict') {
        (NjBaseCompiler.prototype as unknown as { compileDict(n: NjNode, f: NjFrame): void }).compileDict.call(this, node, frame);
        return;
      }
      this._emit('{');
      (node.children as NjNode[]).forEach((pair, i) => {
        if (i > 0) this._emit(', ');
        this._emit('[');
        this.compile(pair.key, frame);
        this._emit(']: ');
        this.compile(pair.value, frame);
      });
      this._emit('}');
    }

    /** The callee's name for error messages, emitted inside `"…"`: a string literal in it may hold a newline. */
    _getNodeName(node: NjNode): string {
      const name = (NjBaseCompiler.prototype as unknown as { _getNodeName(n: NjNode): string })._getNodeName.call(this, node);
      return name.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
    }

    compileStarArg(node: NjNode, frame: NjFrame): void {
      this._emit('...');
      this.call('iterable', [node.expr], frame);
    }

    compileDoubleStarArg(node: NjNode, frame: NjFrame): void {
      this._emit('...');
      this.call('mapping', [node.expr], frame);
    }

    /** nunjucks updates `lineno` only at function calls; an error elsewhere reported the last call's line. */
    override compile(node: NjNode, frame: NjFrame): void {
      if (node !== undefined && node !== null && STATEMENTS.has(node.typename) && !isTemplateData(node)) {
        this._emitLine(`lineno = ${node.lineno}; colno = ${node.colno};`);
      }
      super.compile(node, frame);
    }

    assertType(node: NjNode, ...types: NjNodeClass[]): void {
      if (kinds.own.some((t) => node instanceof t)) return;
      if (!types.some((t) => node instanceof t)) this.fail(`assertType: invalid type: ${node.typename}`, node.lineno, node.colno);
    }

    call(fn: string, args: readonly NjNode[], frame: NjFrame): void {
      this._emit(`jinja.${fn}(`);
      args.forEach((arg, i) => {
        if (i > 0) this._emit(', ');
        this.compile(arg, frame);
      });
      this._emit(')');
    }
  };
}

/** Operators with Python's semantics. */
function operatorLayer(Base: Layer, kinds: Kinds): Layer {
  const { Compiler: NjBaseCompiler, nodes: njNodes } = nunjucksInternals();
  return class OperatorCompiler extends Base {
    compileAdd(node: NjNode, frame: NjFrame): void {
      this.call('add', [node.left, node.right], frame);
    }

    /** `a ~ b`: both printed as `{{ }}` prints them (`none` is None), then joined. */
    compileConcat(node: NjNode, frame: NjFrame): void {
      this.call('concat', [node.left, node.right], frame);
    }

    compileMul(node: NjNode, frame: NjFrame): void {
      this.call('mul', [node.left, node.right], frame);
    }

    compileMod(node: NjNode, frame: NjFrame): void {
      this.call('mod', [node.left, node.right], frame);
    }

    compileTruthy(node: NjNode, frame: NjFrame): void {
      this.call('truthy', [node.expr], frame);
    }

    compileLookupVal(node: NjNode, frame: NjFrame): void {
      const val = node.val as NjNode;
      if (val.typename !== 'Slice') return this.call('member', [node.target, val], frame);
      const none = new njNodes.Literal(val.lineno, val.colno, null);
      this.call('slice', [node.target, val.start ?? none, val.stop ?? none, val.step ?? none], frame);
    }

    compileCompare(node: NjNode, frame: NjFrame): void {
      const ops = node.ops as NjNode[];
      // `a == b` / `a != b`: Python's equality (lists and dicts by value).
      if (ops.length === 1 && (ops[0]!.type === '==' || ops[0]!.type === '!=')) {
        if (ops[0]!.type === '!=') this._emit('!');
        return this.call('eq', [node.expr, ops[0]!.expr], frame);
      }
      this.compile(node.expr, frame);
      for (const op of node.ops as NjNode[]) {
        this._emit(` ${COMPARE[op.type as string] ?? (op.type as string)} `);
        this.compile(op.expr, frame);
      }
    }

    compileGroup(node: NjNode, frame: NjFrame): void {
      const children = node.children as NjNode[];
      this._emit(children.length === 1 ? '(' : '[');
      children.forEach((child, i) => {
        if (i > 0) this._emit(',');
        this.compile(child, frame);
      });
      this._emit(children.length === 1 ? ')' : ']');
    }

    compileNot(node: NjNode, frame: NjFrame): void {
      this._emit('!');
      this.call('truthy', [node.target], frame);
    }

    /** `a or b` / `a and b` return an operand (as in Python and JavaScript) but test it with Python truthiness. */
    private shortCircuit(node: NjNode, frame: NjFrame, isOr: boolean): void {
      const left = this._tmpid();
      this._emit(`((${left}) => jinja.truthy(${left}) ? `);
      if (isOr) this._emit(left);
      else this.compile(node.right, frame);
      this._emit(' : ');
      if (isOr) this.compile(node.right, frame);
      else this._emit(left);
      this._emit(')(');
      this.compile(node.left, frame);
      this._emit(')');
    }

    compileOr(node: NjNode, frame: NjFrame): void {
      this.shortCircuit(node, frame, true);
    }

    compileAnd(node: NjNode, frame: NjFrame): void {
      this.shortCircuit(node, frame, false);
    }

    compileInlineIf(node: NjNode, frame: NjFrame): void {
      wrapCondition(node, kinds.Truthy);
      (NjBaseCompiler.prototype as unknown as { compileInlineIf(n: NjNode, f: NjFrame): void }).compileInlineIf.call(this, node, frame);
    }
  };
}

/** Statements: output, if, for, set, do, macros. */
function statementLayer(Base: Layer, kinds: Kinds): JinjaCompilerClass {
  const { Compiler: NjBaseCompiler } = nunjucksInternals();
  const { LoopFilter, ForKeys, RawCode } = kinds;
  const SetNode = nunjucksInternals().nodes.Set;
  return class StatementCompiler extends Base {
    compileIf(node: NjNode, frame: NjFrame, async?: boolean): void {
      wrapCondition(node, kinds.Truthy);
      (NjBaseCompiler.prototype as unknown as { compileIf(n: NjNode, f: NjFrame, a?: boolean): void }).compileIf.call(this, node, frame, async);
    }

    /** `{{ value }}` prints what Python's str() gives (jinja.str); template text is emitted as it is. */
    compileOutput(node: NjNode, frame: NjFrame): void {
      const buffer = (this as unknown as { buffer: string }).buffer;
      for (const child of node.children as NjNode[]) {
        if (child.typename === 'TemplateData') {
          if (child.value === '' || child.value === undefined || child.value === null) continue;
          this._emit(`${buffer} += `);
          this.compileLiteral(child, frame);
          this._emitLine(';');
        } else {
          this._emit(`${buffer} += `);
          this.call('str', [child], frame);
          this._emitLine(';');
        }
      }
    }

    compileForKeys(node: NjNode, frame: NjFrame): void {
      this.call('forKeys', [node.expr], frame);
    }

    compileDo(node: NjNode, frame: NjFrame): void {
      this.compile(node.expr, frame);
      this._emitLine(';');
    }

    override compileSet(node: NjNode, frame: NjFrame): void {
      const targets = node.targets as NjNode[];
      const attr = targets.find((t) => t.typename === 'LookupVal');
      if (attr === undefined && targets.length > 1 && node.value) return this.compileUnpack(node, frame);
      if (attr === undefined) return super.compileSet(node, frame);
      if (targets.length > 1) this.fail('cannot assign to several targets when one is an attribute', node.lineno, node.colno);
      this._emit('jinja.setAttr(');
      this.compile(attr.target, frame);
      this._emit(', ');
      this.compile(attr.val, frame);
      this._emit(', ');
      this.compile(node.value ?? node.body, frame);
      this._emitLine(');');
    }

    /** `{% set a, b = pair %}`: each target gets its item, as Python unpacks (nunjucks gave each the whole value). */
    private compileUnpack(node: NjNode, frame: NjFrame): void {
      const targets = node.targets as NjNode[];
      const items = this._tmpid();
      this._emit(`var ${items} = `);
      this.call('unpack', [node.value], frame);
      this._emitLine(';');
      this._emitLine(`jinja.unpackCount(${items}, ${targets.length});`);
      targets.forEach((target, i) => {
        const item = new RawCode(node.lineno, node.colno, `${items}[${i}]`);
        super.compileSet(new SetNode(node.lineno, node.colno, [target], item), frame);
      });
    }

    compileRawCode(node: NjNode): void {
      this._emit(node.code as string);
    }

    /**
     * Every macro is wrapped so a `return(value)` inside it (dbt's way for a macro
     * to hand back a value instead of text) makes the call return that value.
     */
    override _compileMacro(node: NjNode, frame: NjFrame | undefined): string {
      const id = compileMacroDefinition(this as unknown as Parameters<typeof compileMacroDefinition>[0], node, frame);
      this._emitLine(`${id} = jinja.returnable(${id});`);
      return id;
    }

    override compileFor(node: NjNode, frame: NjFrame): void {
      const arr = node.arr as NjNode;
      if (arr.typename === 'InlineIf' && arr.else_ === null) {
        node.arr = new LoopFilter(arr.lineno, arr.colno, arr.body, node.name, arr.cond);
      } else if (node.name.typename !== 'Array' && arr.typename !== 'LoopFilter' && arr.typename !== 'ForKeys') {
        // `for k in mapping` walks its keys (nunjucks walked nothing with one loop variable).
        node.arr = new ForKeys(arr.lineno, arr.colno, arr);
      }
      super.compileFor(node, frame);
    }

    /** The items of `for <name> in <arr> if <cond>`, filtered before the loop so `loop.length`/`loop.index` count kept items. */
    compileLoopFilter(node: NjNode, frame: NjFrame): void {
      const item = this._tmpid();
      const out = this._tmpid();
      const inner = frame.push();
      const names: NjNode[] = node.name.typename === 'Array' ? node.name.children : [node.name];
      this._emit(`((${out}) => ${out}.filter((${item}) => { `);
      names.forEach((name, i) => {
        const id = this._tmpid();
        inner.set(name.value as string, id);
        this._emit(`const ${id} = ${names.length === 1 ? item : `${item}[${i}]`}; `);
      });
      this._emit('return ');
      this.call('truthy', [node.cond], inner);
      this._emit('; }))(jinja.loopItems(');
      this.compile(node.arr, frame);
      this._emit(`, ${names.length > 1 ? 'true' : 'false'}))`);
    }
  };
}

function isTemplateData(node: NjNode): boolean {
  return node.typename === 'Output' && (node.children as NjNode[]).every((c) => c.typename === 'TemplateData');
}

/** The module nunjucks' Template accepts as precompiled code (`{ type: 'code', obj }`). */
export interface CompiledModule {
  readonly root: unknown;
  readonly [block: string]: unknown;
}

/** The generated code of `source`, with its string literals and template text (`K`) and positions (`P`) taken out. */
export interface Generated {
  readonly code: string;
  readonly constants: readonly string[];
  /** Line and column pairs, as the code reads them from `P`. */
  readonly positions: readonly number[];
}

export function generate(source: string, name: string): Generated {
  return generateAst(jinjaParser().parse(source), name);
}

/** `generate` for a syntax tree already parsed (macro-files.ts builds one from several files). */
export function generateAst(root: NjNode, name: string): Generated {
  const ast = nunjucksInternals().transformer.transform(root, [], name);
  compilerClass ??= makeCompiler();
  const compiler = new compilerClass(name, false);
  compiler.compile(ast, undefined as unknown as NjFrame);
  // Positions become `P[i]` too: what is left is the template's shape.
  const positions: number[] = [];
  const code = compiler.getCode().replace(POSITION, (_m, kw: string | undefined, line: string, sep: string, col: string) => {
    positions.push(Number(line), Number(col));
    return `${kw ?? ''}lineno = P[${positions.length - 2}]${sep}colno = P[${positions.length - 1}]`;
  });
  return { code, constants: compiler.constants, positions };
}

/** Parses (jinja-parser.ts) and compiles `source`; throws nunjucks' TemplateError (with `lineno`/`colno`) on a syntax error. */
export function compileJinja(source: string, name: string): CompiledModule {
  const shape = templateShape(source);
  if (shape !== undefined) {
    let compiled = shapes.get(shape.canonical);
    if (compiled === undefined) {
      compiled = compileShape(shape, name);
      if (shapes.size >= MAX_SHAPES) shapes.clear();
      shapes.set(shape.canonical, compiled);
    }
    if (compiled !== null) return instantiate(compiled, shape, source);
  }
  const g = generate(source, name);
  return factoryFor(g.code)(jinjaRuntime, g.constants, g.positions);
}

/** Compiles a syntax tree already parsed (no shape sharing: macro files compile once per run). */
export function compileAst(root: NjNode, name: string): CompiledModule {
  const g = generateAst(root, name);
  return factoryFor(g.code)(jinjaRuntime, g.constants, g.positions);
}

/** What a template's own generation would give: `generate(source)` without parsing it (tests compare the two). */
export function generateByShape(source: string, name: string): Generated | undefined {
  const shape = templateShape(source);
  const compiled = shape === undefined ? null : compileShape(shape, name);
  if (shape === undefined || compiled === null) return undefined;
  return { code: compiled.code, constants: constantsOf(compiled, shape), positions: positionsFor(compiled, shape, source) };
}

type Factory = (jinja: unknown, constants: readonly string[], positions: readonly number[]) => CompiledModule;

function factoryFor(code: string): Factory {
  let factory = factories.get(code);
  if (factory === undefined) {
    factory = new Function('jinja', 'K', 'P', code) as Factory;
    if (factories.size >= MAX_SHAPES) factories.clear();
    factories.set(code, factory);
  }
  return factory;
}

/**
 * One function per template *shape* (the generated code with its string
 * literals, template text and positions taken out): models that differ only
 * in their text and `ref()` names share one `new Function` — its parse and
 * JIT warm-up were most of a cold compile.
 */
const factories = new Map<string, Factory>();
const MAX_SHAPES = 20_000;
// `var lineno = 3;\nvar colno = 0;` (function starts), `lineno = 3; colno = 5;` (statements), `(lineno = 3, colno = 5, ` (calls).
const POSITION = /(var |\()?lineno = (\d+)(;\s*(?:var )?|, )colno = (\d+)/g;

/** A constant of a shape's code filled from the template: marker `marker`'s value, trimmed as nunjucks trimmed the shape's. */
interface Slot {
  readonly marker: number;
  readonly trimStart: boolean;
  readonly trimEnd: boolean;
}

interface CompiledShape {
  readonly code: string;
  readonly factory: Factory;
  readonly constants: readonly (string | Slot)[];
  /** Per position pair of the code: the index of the token it points at. */
  readonly tokens: readonly number[];
}

/**
 * Templates by shape (template-shape.ts): the shape's code, where its
 * constants come from and which token each position is; null when a
 * template of this shape must be compiled on its own.
 */
const shapes = new Map<string, CompiledShape | null>();
const SLOT = new RegExp(`^( ?)${MARK_OPEN}(\\d+)${MARK_CLOSE}( ?)$`);

function compileShape(shape: TemplateShape, name: string): CompiledShape | null {
  let g: Generated;
  try {
    g = generate(shape.canonical, name);
  } catch {
    return null; // a syntax error: the template's own compile reports it with its own positions
  }
  // A marker in the code itself (a dict key is emitted inline): this shape's code depends on the values.
  if (g.code.includes(MARK_OPEN)) return null;
  const constants: (string | Slot)[] = [];
  for (const k of g.constants) {
    if (!k.includes(MARK_OPEN)) {
      constants.push(k);
      continue;
    }
    const m = SLOT.exec(k);
    if (m === null) return null;
    const marker = Number(m[2]);
    const text = shape.kinds[marker] === 'text';
    if (!text && (m[1] !== '' || m[3] !== '')) return null;
    constants.push({ marker, trimStart: text && m[1] === '', trimEnd: text && m[3] === '' });
  }
  const lineStarts = [0];
  for (let k = shape.canonical.indexOf('\n'); k >= 0; k = shape.canonical.indexOf('\n', k + 1)) lineStarts.push(k + 1);
  const tokenAt = new Map(shape.canonicalStarts.map((start, i) => [start, i]));
  const tokens: number[] = [];
  for (let p = 0; p < g.positions.length; p += 2) {
    const line = lineStarts[g.positions[p]!];
    const token = line === undefined ? undefined : tokenAt.get(line + g.positions[p + 1]!);
    if (token === undefined) return null;
    tokens.push(token);
  }
  return { code: g.code, factory: factoryFor(g.code), constants, tokens };
}

function constantsOf(c: CompiledShape, shape: TemplateShape): string[] {
  return c.constants.map((k) => {
    if (typeof k === 'string') return k;
    let v = shape.values[k.marker]!;
    // nunjucks' own trims (parser.js parseNodes).
    if (k.trimStart) v = v.replace(/^\s*/, '');
    if (k.trimEnd) v = v.replace(/\s*$/, '');
    return v;
  });
}

function positionsFor(c: CompiledShape, shape: TemplateShape, source: string): number[] {
  return positionsOf(source, c.tokens.map((t) => shape.starts[t]!)).flat();
}

function instantiate(c: CompiledShape, shape: TemplateShape, source: string): CompiledModule {
  return c.factory(jinjaRuntime, constantsOf(c, shape), positionsFor(c, shape, source));
}
