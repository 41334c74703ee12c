/**
 * The `pg` driver module, loaded without the cost of its runtime probe. On
 * load, pg asks whether it runs in a Cloudflare Worker: it reads
 * `navigator.userAgent` when `navigator` exists (Node ≥ 21) and otherwise
 * constructs a `Response`, which on Node 20 loads the whole fetch
 * implementation (undici) — measured 160 ms of every process and worker
 * thread that loads pg, on 2 cores. Node ≥ 21 answers the probe with
 * `navigator.userAgent` = `Node.js/<version>`; we give Node 20 the same
 * answer for the duration of the load and remove it again.
 *
 * Every module that needs pg at run time imports it from here.
 */
import { createRequire } from 'node:module';
import type PgModule from 'pg';

const require = createRequire(import.meta.url);

function loadPg(): typeof PgModule {
  const g = globalThis as { navigator?: unknown };
  if (g.navigator !== undefined) return require('pg') as typeof PgModule;
  g.navigator = { userAgent: `Node.js/${process.versions.node}` };
  try {
    return require('pg') as typeof PgModule;
  } finally {
    delete g.navigator;
  }
}

const pg = loadPg();
/** The driver's classes; types still come from `import type pg from 'pg'`. */
export const Pool = pg.Pool;
export const Client = pg.Client;
/** Type parsers (the compile-time query helper reads int8 and numeric as numbers, as dbt's agate tables hold them). */
export const types = pg.types;
