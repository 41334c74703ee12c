/**
 * `http` steps: one request with `fetch`; a mapping payload
 * is sent as JSON. State `{status_code, headers, body, json}` keeps the first
 * 1 MiB of the body; `json` is the parsed body or null. A status ≥ 400
 * fails the step (the state is still published); the step's `timeout`
 * (default 30 s) and a cancel abort the request.
 */
import { EngineError } from '../../errors.js';
import type { HttpStep } from '../../jobs/index.js';
import { StepFailure, type StepContext } from '../context.js';
import { toJson, type Value } from '../evaluate.js';

export const HTTP_BODY_LIMIT = 1024 * 1024;

async function readBody(res: Response, limit: number): Promise<{ text: string; truncated: boolean }> {
  if (res.body === null) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > limit) {
      chunks.push(value.subarray(0, limit - size));
      size = limit;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  let text = Buffer.concat(chunks).toString('utf8');
  // A multi-byte character cut at the limit decodes to U+FFFD; drop it.
  if (truncated && text.endsWith('\uFFFD')) text = text.slice(0, -1);
  return { text, truncated };
}

function parseJson(text: string): Value {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text, (k, v) => (k === '__proto__' ? undefined : v)) as Value;
  } catch {
    return null;
  }
}

export async function runHttp(step: HttpStep, x: StepContext): Promise<Value> {
  const url = x.text(step.url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EngineError('node', `invalid url ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new EngineError('node', `url must be http or https, got ${JSON.stringify(url)}`);
  const headers = new Headers();
  for (const [k, v] of Object.entries(step.headers ?? {})) headers.set(k, x.text(v));
  let body: string | undefined;
  if (step.payload !== undefined && step.method !== 'GET' && step.method !== 'HEAD') {
    if (typeof step.payload === 'string') body = x.text(step.payload);
    else {
      body = toJson(x.deep(step.payload, true));
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }
  const timeout = AbortSignal.timeout(step.timeout * 1000);
  const signal = AbortSignal.any([x.signal, timeout]);
  x.log(`${step.method} ${parsed.origin}${parsed.pathname}`);
  let res: Response;
  let text: { text: string; truncated: boolean };
  try {
    res = await fetch(parsed, { method: step.method, headers, signal, redirect: 'follow', ...(body !== undefined ? { body } : {}) });
    text = await readBody(res, HTTP_BODY_LIMIT);
  } catch (err) {
    if (x.signal.aborted) throw new EngineError('cancelled', 'cancelled');
    if (timeout.aborted) throw new EngineError('node', `http request timed out after ${step.timeout} s`);
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new EngineError('node', `http request failed: ${err instanceof Error ? err.message : String(err)}${cause}`);
  }
  const resHeaders: Record<string, Value> = {};
  res.headers.forEach((v, k) => Object.defineProperty(resHeaders, k, { value: v, enumerable: true, writable: true, configurable: true }));
  x.log(`status ${res.status}, ${Buffer.byteLength(text.text)} byte(s)${text.truncated ? ' (body truncated at 1 MiB)' : ''}`);
  const state = { status_code: res.status, headers: resHeaders, body: text.text, json: text.truncated ? null : parseJson(text.text) };
  if (res.status >= 400) throw new StepFailure(`http status ${res.status}`, state);
  return state;
}
