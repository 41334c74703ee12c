/**
 * The daemon's Koa application: request id and one log line per
 * request, errors rendered as `{error, code}` in one place, token
 * authentication before routing, then the route table. The app is a message
 * producer: handlers call services and render what they return.
 */
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
  const table = new Map(opts.routes.map((r) => [`${r.method} ${r.path}`, r]));
  const publicPaths = new Set(opts.routes.filter((r) => !r.auth).map((r) => r.path));
  const failures = opts.authFailures ?? new AuthFailureLimiter();
  const ui = opts.ui;
  if (ui) app.use(async (ctx, next) => (ctx.path === '/ui' || ctx.path.startsWith('/ui/') ? ui(ctx) : next()));
  app.use(async (ctx) => {
    const started = performance.now();
    const requestId = randomUUID();
    ctx.set('X-Request-Id', requestId);
    let projectId = '-';
    try {
      // HEAD is GET without the body (Koa leaves it out).
      const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
      const isPublic = publicPaths.has(ctx.path) && method === 'GET';
      if (!isPublic) {
        const project = await authenticate(ctx.get('authorization') || undefined, opts.projectForDigest);
        if (project === undefined) throw failures.fail(ctx.ip) ?? unauthorized();
        projectId = project;
      }
      const r = table.get(`${method} ${ctx.path}`);
      if (!r) throw notFound(`no route for ${ctx.method} ${ctx.path}`);
      const body = r.method === 'POST' ? await readJsonBody(ctx) : {};
      const input = r.body ? validateBody(body, r.body) : body;
      ctx.status = 200;
      ctx.body = await r.handler({ ctx, projectId }, input);
    } catch (err) {
      const e = toHttpError(err);
      if (e.status >= 500) opts.logger.log('error', `request ${requestId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      ctx.status = e.status;
      ctx.body = { error: e.message, code: e.code, ...(e.extra ?? {}) };
      if (e.options.retryAfter !== undefined) ctx.set('Retry-After', String(e.options.retryAfter));
      if (e.options.closeConnection) {
        ctx.set('Connection', 'close');
        ctx.res.once('finish', () => ctx.req.socket.destroySoon());
      }
    } finally {
      ctx.type = 'application/json; charset=utf-8';
      const ms = (performance.now() - started).toFixed(1);
      opts.logger.log('info', `${ctx.method} ${ctx.path} ${ctx.status} ${ms}ms ${requestId} ${projectId}`);
    }
  });
  app.on('error', () => {});
  return app;
}

export { HttpError };
