/**
 * Reads a request's JSON body (content type and size checks): at most 1 MiB
 * (413 `request body exceeds 1 MiB`), `Content-Type: application/json` for a
 * non-empty body, valid JSON, a JSON object; an empty body is `{}`. Written
 * here rather than through a body-parser so each failure has the documented
 * message and the checks run in the documented order.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { badRequest, clientHungUp, HttpError } from './http-error.js';

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

export async function readJsonBody(ctx: Context): Promise<Record<string, unknown>> {
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = (await readBody(ctx.req)).toString('utf8');
  if (text.trim() === '') return {};
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

/**
 * The raw body, by 'data' events (an async iterator costs a few promises per
 * chunk). Over 1 MiB → 413: reading stops and the connection is closed once
 * that answer is written (destroying the socket here would reset the
 * connection before the client sees any answer).
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = () => {
      cleanup();
      reject(clientHungUp());
    };
    const onClose = () => {
      cleanup();
      reject(clientHungUp());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** A query parameter given at most once (a repeated one is a 400); undefined when absent. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw badRequest(`query parameter "${name}" given more than once`);
  return v;
}
