/**
 * The daemon's Koa application: request id and one log line per
 * request, errors rendered as `{error, code}` in one place, then the route
 * table on @koa/router, each authenticated route checking the token before
 * it reads the body, and a 404 for the rest (after the same token check). The app is a message
 * producer: handlers call services and render what they return.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../engine/log.js';
import { sha256hex } from '../engine/state/ids.js';
import { readJsonBody } from './body.js';
import { AuthFailureLimiter } from './auth-limit.js';
import { HttpError, notFound, toHttpError, unauthorized } from './http-error.js';
import type { Route } from './route.js';
import { validateBody } from './validate.js';

export interface AppOptions {
  readonly routes: readonly Route[];
  /** Resolves a token's SHA-256 digest (hex) to its project id. */
  readonly projectForDigest: (digest: string) => Promise<string | undefined>;
  readonly logger: Logger;
  /** The web console: answers every path under `/ui` itself (its own auth, errors and content types). */
  readonly ui?: (ctx: Koa.Context) => Promise<void>;
  /** Failed-authentication limit per address (shared with the console's sign-in); default: one of its own. */
  readonly authFailures?: AuthFailureLimiter;
}

const TOKEN = /^Service-Project-Token ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/i;

async function authenticate(header: string | undefined, lookup: AppOptions['projectForDigest']): Promise<string | undefined> {
  const m = TOKEN.exec(header ?? '');
  // The scheme is case-insensitive; the token itself must be lowercase.
  if (!m || m[1] !== m[1]!.toLowerCase() || !/^service-project-token$/i.test(header!.split(' ')[0]!)) return undefined;
  return lookup(sha256hex(m[1]!));
}

export function createApp(opts: AppOptions): Koa {
  const app = new Koa();
  const failures = opts.authFailures ?? new AuthFailureLimiter();
  /** The token's project, or the 401 (429 once the address failed too often). */
  async function requireProject(ctx: Koa.Context): Promise<string> {
    const project = await authenticate(ctx.get('authorization') || undefined, opts.projectForDigest);
    if (project === undefined) throw failures.fail(ctx.ip) ?? unauthorized();
    ctx.state.projectId = project;
    return project;
  }
  const ui = opts.ui;
  if (ui) app.use(async (ctx, next) => (ctx.path === '/ui' || ctx.path.startsWith('/ui/') ? ui(ctx) : next()));
  app.use(async (ctx, next) => {
    const started = performance.now();
    const requestId = randomUUID();
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } catch (err) {
      renderError(ctx, err, requestId, opts.logger);
    } finally {
      ctx.type = 'application/json; charset=utf-8';
      const ms = (performance.now() - started).toFixed(1);
      opts.logger.log('info', `${ctx.method} ${ctx.path} ${ctx.status} ${ms}ms ${requestId} ${(ctx.state as { projectId?: string }).projectId ?? '-'}`);
    }
  });
  app.use(apiRouter(opts.routes, requireProject).routes());
  // No route for this method and path: still a 401 without a valid token, so unknown paths reveal nothing.
  app.use(async (ctx) => {
    await requireProject(ctx);
    throw notFound(`no route for ${ctx.method} ${ctx.path}`);
  });
  app.on('error', () => {});
  return app;
}

/**
 * The route table on @koa/router, one layer per route (a GET layer also
 * answers HEAD, which Koa sends without the body). Paths match exactly:
 * case-sensitive and without an optional trailing slash (`strict`), as the
 * contract's routes are. A method or path no route serves falls through to
 * the 404 after the router: the API answers 404, never 405, for a known path
 * with another method, so the router's allowedMethods() is not mounted.
 */
function apiRouter(routes: readonly Route[], requireProject: (ctx: Koa.Context) => Promise<string>): Router {
  const router = new Router({ strict: true, sensitive: true });
  for (const r of routes) {
    router.register(r.path, [r.method], async (ctx) => {
      const projectId = r.auth ? await requireProject(ctx) : '-';
      const body = r.method === 'POST' ? await readJsonBody(ctx) : {};
      const input = r.body ? validateBody(body, r.body) : body;
      ctx.status = 200;
      ctx.body = await r.handler({ ctx, projectId }, input);
    });
  }
  return router;
}

/** Every failure as `{error, code}` with its status and headers: the one place the API formats an error. */
function renderError(ctx: Koa.Context, err: unknown, requestId: string, logger: Logger): void {
  const e = toHttpError(err);
  if (e.status >= 500) logger.log('error', `request ${requestId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  ctx.status = e.status;
  ctx.body = { error: e.message, code: e.code, ...(e.extra ?? {}) };
  if (e.options.retryAfter !== undefined) ctx.set('Retry-After', String(e.options.retryAfter));
  if (e.options.closeConnection) {
    ctx.set('Connection', 'close');
    ctx.res.once('finish', () => ctx.req.socket.destroySoon());
  }
}

export { HttpError };
