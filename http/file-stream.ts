/**
 * A large file as the File JSON of `GET /project/file/get`, written while it
 * is read: the body is decoded and escaped a chunk at a time, so the event
 * loop is held for one chunk, never for the whole file, and memory stays at a
 * few chunks. A first pass decides between UTF-8 text and base64 as for
 * small files (engine/files/file-entry.ts). `size` is the count of bytes
 * sent, so it matches the body even when the file changes meanwhile.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { ProjectFile } from '../engine/files/file-entry.js';
import { notFound } from './http-error.js';

const CHUNK_BYTES = 256 * 1024;

/** Whether the file's bytes are valid UTF-8, read a chunk at a time. */
async function isUtf8File(path: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) decoder.decode(chunk as Buffer, { stream: true });
    decoder.decode();
    return true;
  } catch (err) {
    if (err instanceof TypeError) return false; // the decoder's "not valid UTF-8"
    throw err;
  }
}

/** A JSON string's inside (no quotes). */
const escaped = (text: string): string => JSON.stringify(text).slice(1, -1);

async function* bodyText(path: string, counter: { bytes: number }): AsyncGenerator<string> {
  // Not fatal: a file changed since the first pass still gives valid JSON.
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
    counter.bytes += (chunk as Buffer).length;
    yield escaped(decoder.decode(chunk as Buffer, { stream: true }));
  }
  yield escaped(decoder.decode());
}

async function* bodyBase64(path: string, counter: { bytes: number }): AsyncGenerator<string> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
    counter.bytes += (chunk as Buffer).length;
    const all = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const whole = all.length - (all.length % 3); // base64 of whole 3-byte groups joins without padding
    yield all.subarray(0, whole).toString('base64');
    carry = all.subarray(whole);
  }
  yield carry.toString('base64');
}

async function* fileJson(entry: ProjectFile, path: string, text: boolean): AsyncGenerator<string> {
  const counter = { bytes: 0 };
  yield `{"name":${JSON.stringify(entry.name)},"body":"`;
  yield* text ? bodyText(path, counter) : bodyBase64(path, counter);
  yield `"${text ? '' : ',"encoding":"base64"'},"is_dir":false,"updated":${JSON.stringify(entry.updated)},"size":${counter.bytes}}`;
}

/**
 * The File (with body) of a large regular file, as a stream of JSON text.
 * The first pass runs before the answer starts, so a file removed meanwhile
 * is still a 404.
 */
export async function fileJsonStream(entry: ProjectFile, path: string): Promise<Readable> {
  let text: boolean;
  try {
    text = await isUtf8File(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') throw notFound(`file ${JSON.stringify(entry.name)} not found`);
    throw err;
  }
  return Readable.from(fileJson(entry, path, text), { objectMode: false });
}
