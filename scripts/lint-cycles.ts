/**
 * `npm run lint:cycles`: no import circle among the repository's modules,
 * counting `import type` and `export … from`. ESLint's import-x/no-cycle
 * skips type-only imports and has no option to count them, yet a reader
 * following a file's imports walks those too (docs/architecture.md).
 * Prints each circle and exits 1 when there is one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The folders of TypeScript source checked by `npm run lint`. */
export const SOURCE_ROOTS = ['engine', 'actors', 'http', 'daemon', 'cli', 'bench', 'test', 'scripts'];

function tsFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist' && e.name !== 'out') tsFiles(p, out);
    } else if (e.name.endsWith('.ts')) out.push(resolve(p));
  }
  return out;
}

/** The repository modules `file` imports or re-exports from, type-only ones included. */
function localImports(file: string, known: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const s of source.statements) {
    const spec = (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : undefined;
    if (spec === undefined || !spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    if (known.has(target)) out.push(target);
  }
  return out;
}

/** Every circle (strongly connected set of two or more modules, or one importing itself) under `roots`. */
export function importCircles(roots: readonly string[]): string[][] {
  const files = roots.flatMap((r) => tsFiles(r));
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, localImports(f, known)]));
  // Tarjan's strongly connected components, iterative so deep chains do not overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  for (const start of files) {
    if (index.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, i] = top;
      const deps = edges.get(v)!;
      if (i < deps.length) {
        top[1]++;
        const w = deps[i]!;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) !== index.get(v)) continue;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || deps.includes(v)) circles.push(component.sort());
    }
  }
  return circles;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const circles = importCircles(SOURCE_ROOTS);
  for (const c of circles) console.error(`import circle among: ${c.map((f) => relative(process.cwd(), f)).join(', ')}`);
  if (circles.length > 0) process.exitCode = 1;
}
