/**
 * The web console under `/ui`: server-rendered pages (handlebars) over the
 * same services as the API. One handler does, in order: security headers
 * on every answer (a Content-Security-Policy without inline scripts or
 * styles), the static script and stylesheet, sign-in and sign-out (one
 * @koa/router router), the session check (signed out → redirect to
 * sign-in), then the page's route (a second router, after the session
 * check) with the CSRF check of every form post (missing or wrong → 403);
 * failures render as an error page with the status the API would give them.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { errorChain } from '../../engine/errors.js';
import { sha256hex } from '../../engine/state/ids.js';
import { AuthFailureLimiter } from '../auth-limit.js';
import { HttpError, toHttpError } from '../http-error.js';
import { CONSOLE_CSS } from './assets/console-css.js';
import { CONSOLE_JS } from './assets/console-js.js';
import { readForm, type Form } from '../body.js';
import { executionPages } from './pages/execution-pages.js';
import { filePages } from './pages/file-pages.js';
import { jobPages } from './pages/job-pages.js';
import { lineagePages } from './pages/lineage-pages.js';
import type { LiveStreams } from './pages/live-events.js';
import { overviewPages } from './pages/overview-pages.js';
import { searchPages } from './pages/search-pages.js';
import { randomId, sameSecret, SessionStore, type Session } from './sessions.js';
import type { ConsoleDeps } from './ui-deps.js';
import type { UiRequest, UiResult, UiRoute } from './ui-route.js';
import { renderPage } from './views.js';

export const SESSION_COOKIE = 'service_session';
/** The sign-in form's CSRF secret (double submit: cookie and form field), before any session exists. */
export const SIGN_IN_COOKIE = 'service_signin';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const TOKEN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const STATIC: Readonly<Record<string, { readonly type: string; readonly body: string }>> = {
  '/ui/static/console.js': { type: 'text/javascript; charset=utf-8', body: CONSOLE_JS },
  '/ui/static/console.css': { type: 'text/css; charset=utf-8', body: CONSOLE_CSS },
};

/** A path segment, URL-decoded; a malformed %-escape names no page (404). */
function decodeParam(raw: string, path: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(404, 'not_found', `no page at ${path}: malformed %-escape in the path`);
  }
}

export const isConsolePath = (path: string): boolean => path === '/ui' || path.startsWith('/ui/');

/** A `next` target after sign-in: a console path on this site, nothing else. */
function safeNext(raw: string | undefined): string {
  if (raw === undefined || !raw.startsWith('/ui') || raw.startsWith('//') || /[\\\s]/.test(raw) || raw.startsWith('/ui/sign-')) return '/ui';
  return raw;
}

/**
 * Served over TLS: by this process, or by a proxy in front of it that says so
 * (`X-Forwarded-Proto: https`). A client that claims it falsely only gets a
 * Secure cookie its own plain-HTTP requests will not carry back.
 */
export function overTls(ctx: Context): boolean {
  return ctx.secure || ctx.get('x-forwarded-proto').split(',')[0]!.trim().toLowerCase() === 'https';
}

function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
}

export interface WebConsole {
  handle(ctx: Context): Promise<void>;
  readonly sessions: SessionStore;
  /** Ends every open live stream (the daemon is stopping). */
  close(): void;
}

function setCookie(ctx: Context, name: string, value: string, maxAgeMs: number): void {
  const secure = overTls(ctx);
  // Behind a TLS-terminating proxy the socket is plain HTTP; the cookie is Secure all the same.
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'strict', secure, path: '/ui', maxAge: maxAgeMs, overwrite: true });
}

function html(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body;
}

function redirect(ctx: Context, to: string): void {
  ctx.status = 303;
  ctx.redirect(to);
}

/** Signing in and out, and the session of a request. */
function consoleSessions(deps: ConsoleDeps, sessions: SessionStore) {
  const failures = deps.authFailures ?? new AuthFailureLimiter();
  function signInPage(ctx: Context, next: string, status = 200, error?: string, notice?: string): void {
    const secret = randomId(18);
    setCookie(ctx, SIGN_IN_COOKIE, secret, 60 * 60 * 1000);
    html(ctx, status, renderPage('signIn', { title: 'Sign in', csrf: secret, next, ...(error ? { error } : {}), ...(notice ? { notice } : {}) }));
  }

  async function signIn(ctx: Context): Promise<void> {
    const form = await readForm(ctx);
    const next = safeNext(form.get('next'));
    if (!sameSecret(form.get('_csrf'), ctx.cookies.get(SIGN_IN_COOKIE))) throw new HttpError(403, 'forbidden', 'the sign-in form expired or was not sent by this page: reload it and sign in again');
    const token = (form.get('token') ?? '').trim();
    const digest = sha256hex(token);
    const projectId = TOKEN.test(token) ? await deps.projectForDigest(digest) : undefined;
    if (!projectId) {
      const limited = failures.fail(ctx.ip);
      if (limited) throw limited;
      return signInPage(ctx, next, 401, 'That token does not open any project: check it and try again.');
    }
    sessions.delete(ctx.cookies.get(SESSION_COOKIE));
    const s = sessions.create(projectId, digest);
    setCookie(ctx, SESSION_COOKIE, s.id, sessions.maxMs);
    setCookie(ctx, SIGN_IN_COOKIE, '', 0);
    redirect(ctx, next);
  }

  async function signOut(ctx: Context, session: Session | undefined): Promise<void> {
    const form = await readForm(ctx);
    if (session && !sameSecret(form.get('_csrf'), session.csrf)) throw new HttpError(403, 'forbidden', 'missing or wrong CSRF token: reload the page and try again');
    sessions.delete(session?.id);
    setCookie(ctx, SESSION_COOKIE, '', 0);
    redirect(ctx, '/ui/sign-in?signed_out=1');
  }

  /** The cookie's session, if it is alive and its token still opens its project. */
  async function current(ctx: Context): Promise<Session | undefined> {
    const id = ctx.cookies.get(SESSION_COOKIE);
    const s = sessions.get(id);
    if (!s) return undefined;
    if ((await deps.projectForDigest(s.tokenDigest)) !== s.projectId) {
      sessions.delete(s.id);
      return undefined;
    }
    return s;
  }

  return { signInPage, signIn, signOut, current };
}

/**
 * What answers without a session, on @koa/router (exact, case-sensitive
 * paths; GET layers also answer HEAD): the static script and stylesheet,
 * sign-in, and sign-out (which ends whatever session the cookie names).
 * Anything else falls through to the session check and the pages.
 */
function signedOutRouter(auth: ReturnType<typeof consoleSessions>): Router {
  const router = new Router({ strict: true, sensitive: true });
  for (const [path, asset] of Object.entries(STATIC)) {
    router.get(path, (ctx) => {
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = asset.body;
    });
  }
  router.get('/ui/sign-in', (ctx) => auth.signInPage(ctx, safeNext(typeof ctx.query.next === 'string' ? ctx.query.next : undefined), 200, undefined, ctx.query.signed_out === '1' ? 'Signed out.' : undefined));
  router.post('/ui/sign-in', (ctx) => auth.signIn(ctx));
  router.post('/ui/sign-out', async (ctx) => auth.signOut(ctx, await auth.current(ctx)));
  return router;
}

/**
 * The pages on @koa/router: each route's RegExp is its layer's path (a GET
 * layer also answers HEAD) and its groups the page's parameters, URL-decoded
 * here so that a malformed %-escape is a 404 rather than the raw text. The
 * first route matching method and path serves (no page calls next). A path
 * some page serves with another method is 405, any other path 404.
 */
function pageRouter(routes: readonly UiRoute[], serve: (ctx: Context, route: UiRoute, params: string[]) => Promise<void>): (ctx: Context) => Promise<void> {
  const router = new Router();
  for (const route of routes) {
    router.register(route.pattern, [route.method], (ctx) => serve(ctx, route, (ctx.captures ?? []).map((p) => decodeParam(p, ctx.path))), { pathAsRegExp: true });
  }
  const pages = router.routes();
  const none = async (ctx: Context): Promise<never> => {
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    throw new HttpError(router.match(ctx.path, method).path.length > 0 ? 405 : 404, 'not_found', `no page at ${method} ${ctx.path}`);
  };
  return (ctx) => pages(ctx as Parameters<typeof pages>[0], () => none(ctx));
}

/** What a page handler gets: the session's project, the route's parameters, the posted form (its CSRF token checked). */
async function uiRequest(ctx: Context, method: string, session: Session, params: string[], deps: ConsoleDeps): Promise<UiRequest> {
  let form: Form = new Map();
  if (method === 'POST') {
    form = await readForm(ctx);
    if (!sameSecret(form.get('_csrf'), session.csrf)) throw new HttpError(403, 'forbidden', 'missing or wrong CSRF token: reload the page and try again');
  }
  ctx.state.projectId = session.projectId;
  const record = await deps.store.getProject(session.projectId);
  const project = { id: session.projectId, name: record?.name ?? session.projectId };
  return {
    ctx,
    session,
    projectId: session.projectId,
    project,
    params,
    form,
    query: (name) => {
      const v = ctx.query[name];
      return (Array.isArray(v) ? v[0] : v) ?? '';
    },
  };
}

function respond(ctx: Context, req: UiRequest, result: UiResult): void {
  if (result.kind === 'done') return;
  if (result.kind === 'redirect') return redirect(ctx, result.to);
  html(ctx, result.status ?? 200, renderPage(result.view, { ...result.data, project: req.project, csrf: req.session.csrf }));
}

/** A failure as an error page with the status the API would give it; a 5xx is logged with its request id. */
function errorPage(ctx: Context, err: unknown, requestId: string, deps: ConsoleDeps): void {
  const e = toHttpError(err);
  if (e.status >= 500) deps.logger.log('error', `request ${requestId} failed: ${err instanceof Error ? (err.stack ?? errorChain(err)) : String(err)}`);
  if (e.options.closeConnection) {
    ctx.set('Connection', 'close');
    ctx.res.once('finish', () => ctx.req.socket.destroySoon());
  }
  if (e.options.retryAfter !== undefined) ctx.set('Retry-After', String(e.options.retryAfter));
  const heading = e.status === 403 ? 'Forbidden' : e.status === 404 ? 'Not found' : e.status >= 500 ? 'Something went wrong' : 'Cannot do that';
  html(ctx, e.status, renderPage('error', { title: heading, heading, message: e.status >= 500 ? `internal error (request ${requestId})` : e.message, back: '/ui' }));
}

export function webConsole(deps: ConsoleDeps): WebConsole {
  const sessions = new SessionStore(deps.sessions);
  const auth = consoleSessions(deps, sessions);
  const live: LiveStreams = new Set();
  const routes: UiRoute[] = [...overviewPages(deps), ...jobPages(deps), ...executionPages(deps, live), ...filePages(deps), ...lineagePages(deps), ...searchPages(deps)];
  const pages = pageRouter(routes, async (ctx, route, params) => {
    const req = await uiRequest(ctx, ctx.method, (ctx.state as { session: Session }).session, params, deps);
    respond(ctx, req, await route.handler(req));
  });

  const open = signedOutRouter(auth).routes();
  async function dispatch(ctx: Context): Promise<void> {
    await open(ctx as Parameters<typeof open>[0], async () => {
      const session = await auth.current(ctx);
      if (!session) return redirect(ctx, `/ui/sign-in?next=${encodeURIComponent(ctx.path + (ctx.querystring ? `?${ctx.querystring}` : ''))}`);
      ctx.state.session = session;
      await pages(ctx);
    });
  }

  return {
    sessions,
    close: () => {
      for (const end of [...live]) end();
    },
    async handle(ctx) {
      const started = performance.now();
      const requestId = randomUUID();
      ctx.set('X-Request-Id', requestId);
      securityHeaders(ctx);
      try {
        await dispatch(ctx);
      } catch (err) {
        errorPage(ctx, err, requestId, deps);
      } finally {
        // The API's request line, with the session's project (`-` when signed out).
        deps.logger.log('info', `${ctx.method} ${ctx.path} ${ctx.status} ${(performance.now() - started).toFixed(1)}ms ${requestId} ${(ctx.state as { projectId?: string }).projectId ?? '-'}`);
      }
    },
  };
}
