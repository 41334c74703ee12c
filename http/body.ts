/**
 * The daemon's one body reader: koa-body reads every request body — the
 * API's JSON and the console's forms — with its size limits, aborted
 * uploads and the urlencoded parse. This module holds what the API's
 * contract (docs/http-api.md) fixes on top of it: each failure's status and
 * message, the order of the checks (size, content type, JSON syntax, a JSON
 * object) and the field count taken on the text before it is parsed. koa-body
 * runs inside the route, after authentication, so a request without a token
 * gets its 401 before any body is read.
 */
import type { Context, Middleware } from 'koa';
import type { koaBody } from 'koa-body';
import { badRequest, clientHungUp, HttpError } from './http-error.js';

/**
 * A koa-body reader with these options, made on the first body read: koa-body
 * loads zod and formidable, ≈0.1 s of a daemon's start (0.30–0.33 s to import
 * it against 0.19–0.20 s for koa alone) that requests without a body never need.
 */
function lazyReader(options: Parameters<typeof koaBody>[0]): () => Promise<Middleware> {
  let reader: Promise<Middleware> | undefined;
  return () => (reader ??= import('koa-body').then((m) => m.koaBody(options) as Middleware));
}

export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting of arrays/objects a request body may have; no API field needs more than a few levels. */
export const MAX_BODY_DEPTH = 64;

/**
 * Most object keys and array elements a request body may hold, counted over
 * every level: the largest legitimate body (a job with its `vars`, streams and
 * tags) holds far fewer, and validating 40,000 of them held the event loop
 * for seconds.
 */
export const MAX_BODY_FIELDS = 10_000;

/**
 * True when the JSON text holds more than `limit` object keys and array
 * elements, counted on the text before it is parsed: parsing a body of
 * 40,000 keys costs far more than this scan, and such a body is refused
 * anyway. Counts a container's entries as its commas plus one when it is not
 * empty; commas inside strings do not count. Stops at the limit, and gives
 * up (false) past `depthLimit` levels: the parse then answers as it always
 * did (invalid JSON, not an object, nested too deeply).
 */
export function exceedsFields(text: string, limit: number, depthLimit: number): boolean {
  let fields = 0;
  let depth = 0;
  let inString = false;
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    // The first character after `{` or `[`: an entry unless the container closes at once.
    if (opened && c !== 0x7d && c !== 0x5d) fields++;
    opened = c === 0x7b || c === 0x5b;
    if (c === 0x2c) fields++;
    else if (c === 0x22) inString = true;
    else if (opened && ++depth > depthLimit) return false;
    else if (c === 0x7d || c === 0x5d) depth--;
    if (fields > limit) return true;
  }
  return false;
}

/**
 * Whether a body is nested deeper than `depthLimit` or holds more than
 * `fieldLimit` keys and elements; without recursion (a recursive walk — or a
 * validator's — overflows the stack on a few thousand levels). Stops early.
 */
export function bodyShapeProblem(value: unknown, depthLimit: number, fieldLimit: number): 'deep' | 'wide' | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  let fields = 0;
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > depthLimit) return 'deep';
    const children = Array.isArray(v) ? v : Object.values(v);
    fields += children.length;
    if (fields > fieldLimit) return 'wide';
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
  return undefined;
}

const tooManyFields = () => new HttpError(413, 'payload_too_large', `request body has more than ${MAX_BODY_FIELDS} fields (object keys and array elements, all levels)`);

function tooLarge(): HttpError {
  // The rest of the body is never read: the connection closes after this answer.
  return new HttpError(413, 'payload_too_large', 'request body exceeds 1 MiB', undefined, { closeConnection: true });
}

/**
 * The API's reader: every body as text, whatever its type, so that a body
 * over 1 MiB is a 413 before its type is looked at and an empty body of any
 * type is `{}`. JSON is parsed here, not by koa-body: its JSON parser
 * (co-body over @hapi/bourne) parses before any hook could count the fields,
 * and refuses a `__proto__` key as a syntax error where JSON.parse keeps it
 * as data.
 */
const apiText = lazyReader({ json: false, urlencoded: false, multipart: false, text: true, textTypes: ['*/*'], textLimit: MAX_BODY_BYTES });

export async function readJsonBody(ctx: Context): Promise<Record<string, unknown>> {
  const text = await readWith(ctx, apiText, tooLarge);
  if (typeof text !== 'string' || text.trim() === '') return {};
  const type = (ctx.get('content-type') || '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw badRequest('content type must be application/json');
  if (exceedsFields(text, MAX_BODY_FIELDS, MAX_BODY_DEPTH)) throw tooManyFields();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('request body must be a JSON object');
  const shape = bodyShapeProblem(value, MAX_BODY_DEPTH, MAX_BODY_FIELDS);
  if (shape === 'deep') throw badRequest(`request body is nested too deeply (more than ${MAX_BODY_DEPTH} levels of arrays and objects)`);
  if (shape === 'wide') throw tooManyFields();
  return value as Record<string, unknown>;
}

/** A console form post is at most 4 MiB: the file editor posts whole files. */
export const MAX_FORM_BYTES = 4 * 1024 * 1024;

/** A console form's fields: the first value of each name. */
export type Form = ReadonlyMap<string, string>;

const formTooLarge = () => new HttpError(413, 'payload_too_large', 'form exceeds 4 MiB', undefined, { closeConnection: true });

/**
 * The console's reader: urlencoded bodies parsed flat (`a[b]` and `a.b` are
 * plain names, the first of repeated names wins, no cap on their number, as
 * the browser's URLSearchParams reads them), any other type read as text so
 * that a non-empty one is refused after the size check.
 */
const formBody = lazyReader({
  json: false,
  multipart: false,
  urlencoded: true,
  formLimit: MAX_FORM_BYTES,
  text: true,
  textTypes: ['*/*'],
  textLimit: MAX_FORM_BYTES,
  queryString: { allowDots: false, depth: 0, parseArrays: false, duplicates: 'first', parameterLimit: Infinity, plainObjects: true },
});

export async function readForm(ctx: Context): Promise<Form> {
  const body = await readWith(ctx, formBody, formTooLarge);
  const form = new Map<string, string>();
  if (typeof body === 'string') {
    if (body !== '') throw new HttpError(415, 'bad_request', 'forms must be sent as application/x-www-form-urlencoded');
    return form;
  }
  for (const [k, v] of Object.entries(body ?? {})) if (typeof v === 'string') form.set(k, v);
  return form;
}

const nothing = async () => {};

/**
 * Runs a koa-body reader and returns what it read (undefined: the request
 * has no body). Its failures become the contract's: over the limit → the
 * caller's 413; an upload cut short → the client hung up; any other client
 * error (an unknown Content-Encoding, a corrupt gzip body) → 400. Each closes
 * the connection, since the rest of the body stays unread.
 */
async function readWith(ctx: Context, lazy: () => Promise<Middleware>, tooLargeError: () => HttpError): Promise<unknown> {
  const reader = await lazy();
  // koa-body reads only bodies with a type; a body sent without one is taken as
  // application/octet-stream (RFC 9110, section 8.3), so it is read and refused like any other non-JSON type.
  if (ctx.get('content-type') === '') ctx.req.headers['content-type'] = 'application/octet-stream';
  // A compressed body is read from the inflating stream, which never hears that
  // the request was cut short: without this the read would wait forever.
  let onClose = () => {};
  const cutShort = new Promise<never>((_, reject) => {
    onClose = () => {
      if (!ctx.req.complete) reject(clientHungUp());
    };
    ctx.req.once('close', onClose);
    // Closed while the reader was loading (the first body read of the process).
    if (ctx.req.destroyed) onClose();
  });
  try {
    await Promise.race([reader(ctx, nothing), cutShort]);
  } catch (err) {
    throw readFailure(err, tooLargeError);
  } finally {
    ctx.req.off('close', onClose);
  }
  return ctx.request.body;
}

function readFailure(err: unknown, tooLargeError: () => HttpError): unknown {
  if (err instanceof HttpError) return err;
  const e = err as { status?: unknown; type?: unknown; code?: unknown; message?: unknown };
  if (e.status === 413) return tooLargeError();
  if (e.type === 'request.aborted' || e.type === 'request.size.invalid') return clientHungUp();
  const clientError = (typeof e.status === 'number' && e.status >= 400 && e.status < 500) || (typeof e.code === 'string' && e.code.startsWith('Z_'));
  if (clientError) return new HttpError(400, 'bad_request', `cannot read the request body: ${String(e.message)}`, undefined, { closeConnection: true });
  return err;
}

/** A query parameter given at most once (a repeated one is a 400); undefined when absent. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw badRequest(`query parameter "${name}" given more than once`);
  return v;
}
