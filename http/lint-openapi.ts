/**
 * `npm run lint:openapi`: the published OpenAPI documents — a single daemon's
 * and a cluster daemon's — generated from the route table exactly as
 * `GET /openapi.json` serves them, checked by Redocly's
 * recommended rules. Any error or warning fails the lint (Redocly itself only
 * fails on errors).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterRoutes } from './routes/cluster.js';
import { gitRoutes } from './routes/git.js';
import { apiRoutes, type ApiDeps } from './routes/index.js';
import { VERSION } from '../engine/version.js';

// The routes only close over their services; building the document never calls them.
const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not available while generating the document')) });

/** The document a daemon serves: with the cluster routes (cluster mode) or without them. */
async function servedDocument(cluster: boolean): Promise<unknown> {
  const extraRoutes = [...gitRoutes({ git: unused as never }), ...(cluster ? clusterRoutes({ self: '', daemons: unused as never, operatorDigestKnown: unused as never }) : [])];
  const routes = apiRoutes({ version: VERSION, store: unused, projects: unused, executions: unused, connections: () => unused, extraRoutes } as unknown as ApiDeps);
  const openapi = routes.find((r) => r.path === '/openapi.json')!;
  return openapi.handler({ ctx: undefined as never, projectId: '' }, {});
}

const bin = join(import.meta.dirname, '..', 'node_modules', '.bin', 'redocly');

/** Lints one document; true when Redocly reports neither errors nor warnings. */
function lint(doc: unknown, mode: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'service-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    const report = join(dir, 'report.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = spawnSync(bin, ['lint', file, '--format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    writeFileSync(report, r.stdout ?? '');
    const { totals } = JSON.parse(readFileSync(report, 'utf8')) as { totals: { errors: number; warnings: number } };
    if (totals.errors + totals.warnings > 0 || r.status !== 0) {
      spawnSync(bin, ['lint', file], { stdio: 'inherit' });
      console.error(`openapi lint (${mode}): ${totals.errors} error(s), ${totals.warnings} warning(s)`);
      return false;
    }
    console.log(`openapi lint (${mode}): ${Object.keys((doc as { paths: object }).paths).length} paths, 0 errors, 0 warnings (Redocly recommended rules)`);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Both documents a daemon can serve: without cluster mode and with it.
const results = [lint(await servedDocument(false), 'single daemon'), lint(await servedDocument(true), 'cluster mode')];
if (results.includes(false)) process.exitCode = 1;
