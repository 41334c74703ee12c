/**
 * Loads a module next to the caller on first use (`base` is the caller's
 * `import.meta.url`), so code paths a process never takes cost it nothing at
 * start-up (a DuckDB addon, a state-store driver, a task handler).
 *
 * Under tsx in a worker thread (the test suite), Node 20 runs no ESM loader
 * hooks: the thread loaded every TypeScript file through tsx's `require`
 * hook, so a relative `import()` of `./x.js` finds nothing. Then the module
 * is loaded the way that thread loaded the rest, with `require` of the `.ts`
 * file. Compiled code (dist/) always takes the plain `import()`.
 *
 * Since Node 22 the ESM hooks do run in worker threads, yet Piscina still
 * loads the worker entry with `require` (which now succeeds). A relative
 * `import()` would then load a second copy of every module the thread
 * already holds — two EngineError classes, so a cancelled task came back as
 * `internal`. So when this file itself was loaded by `require`, so is the
 * module asked for: one module graph per thread.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** True when tsx compiled this file for `require` (a worker thread under tsx). */
const loadedByRequire = typeof require === 'function';

export async function importNear<M>(base: string, specifier: string): Promise<M> {
  if (loadedByRequire && base.endsWith('.ts')) return createRequire(base)(fileURLToPath(new URL(specifier.replace(/\.js$/, '.ts'), base))) as M;
  const url = new URL(specifier, base);
  try {
    return (await import(url.href)) as M;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (!base.endsWith('.ts') || (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_UNKNOWN_FILE_EXTENSION')) throw err;
    const ts = fileURLToPath(new URL(specifier.replace(/\.js$/, '.ts'), base));
    return createRequire(base)(ts) as M;
  }
}

/**
 * A module loaded on first `get()`, synchronously: `require` of an ES module
 * (Node ≥ 20.19), which gives the very instance `import()` would. For code
 * that is synchronous yet should not load a module it seldom needs (the
 * command line's model renderer: ≈30 modules a compile from the cache never
 * uses). Under tsx (TypeScript sources: tests, development) `require` would
 * load a second copy of every module — two EngineError classes — so there
 * `preload()` must have imported it the usual way first; compiled code needs
 * no preload.
 */
export interface LazyModule<M> {
  get(): M;
  preload(): Promise<void>;
}

export function lazyModule<M>(base: string, specifier: string): LazyModule<M> {
  let mod: M | undefined;
  const typescript = base.endsWith('.ts');
  return {
    get() {
      if (mod !== undefined) return mod;
      if (typescript) throw new Error(`internal: ${specifier} was not preloaded (lazyModule under TypeScript)`);
      mod = createRequire(base)(fileURLToPath(new URL(specifier, base))) as M;
      return mod;
    },
    async preload() {
      if (typescript && mod === undefined) mod = await importNear<M>(base, specifier);
    },
  };
}

/** The module `specifier` (written `./x.js`) next to `base`: its `.ts` source when `base` is TypeScript. */
export function nearModule(base: string, specifier: string): URL {
  return new URL(base.endsWith('.ts') ? specifier.replace(/\.js$/, '.ts') : specifier, base);
}

/**
 * The URL a worker thread starts on to run the module `specifier` next to
 * `base`. Under tsx (the test suite) Node 20 runs no ESM loader hooks in a
 * worker thread, while tsx's `require` hook does work there: the worker
 * starts on a one-line module that `require`s the TypeScript file (as Piscina
 * loads ours). Compiled code starts on the module itself.
 */
export function workerEntryUrl(base: string, specifier: string): URL {
  const entry = nearModule(base, specifier);
  if (!base.endsWith('.ts')) return entry;
  const file = JSON.stringify(fileURLToPath(entry));
  return new URL(`data:text/javascript,${encodeURIComponent(`import { createRequire } from 'node:module'; createRequire(${file})(${file});`)}`);
}

/**
 * `node`'s arguments to run the module `specifier` next to `base` in a child
 * process: compiled code as it is; TypeScript through tsx, with this
 * process's own `--import` of it when it has one.
 */
export function childNodeArgs(base: string, specifier: string): string[] {
  const file = fileURLToPath(nearModule(base, specifier));
  if (!base.endsWith('.ts')) return [file];
  const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
  return [...(hasTsx ? process.execArgv : ['--import', 'tsx']), file];
}
