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
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export async function importNear<M>(base: string, specifier: string): Promise<M> {
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
