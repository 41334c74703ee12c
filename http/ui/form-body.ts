/**
 * Reads a console form post (`application/x-www-form-urlencoded`, at most
 * 4 MiB: the file editor posts whole files). Anything else is refused with a
 * message saying what to send.
 */
import type { Context } from 'koa';
import { clientHungUp, HttpError } from '../http-error.js';

export const MAX_FORM_BYTES = 4 * 1024 * 1024;

export type Form = ReadonlyMap<string, string>;

export async function readForm(ctx: Context): Promise<Form> {
  const type = (ctx.get('content-type') || '').split(';')[0]!.trim().toLowerCase();
  if (Number(ctx.get('content-length') || '0') > MAX_FORM_BYTES) throw new HttpError(413, 'payload_too_large', 'form exceeds 4 MiB', undefined, { closeConnection: true });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) throw new HttpError(413, 'payload_too_large', 'form exceeds 4 MiB', undefined, { closeConnection: true });
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof HttpError ? err : clientHungUp();
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text !== '' && type !== 'application/x-www-form-urlencoded') throw new HttpError(415, 'bad_request', 'forms must be sent as application/x-www-form-urlencoded');
  const form = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(text)) if (!form.has(k)) form.set(k, v);
  return form;
}
