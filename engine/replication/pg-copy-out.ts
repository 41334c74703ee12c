/**
 * `COPY … TO STDOUT` as a readable byte stream, read straight off the
 * connection's socket: a pg Submittable that takes the socket's 'data'
 * events from pg's protocol parser for the length of the COPY and gives
 * them back at its end.
 *
 * Why not pg-copy-streams' `to()`: PostgreSQL sends one CopyData message
 * per row and `to()` slices, lists and concatenates every message — about
 * 0.5 s of this thread per 1M bench rows. Here each socket chunk's CopyData
 * payloads are moved together in place (over the 5-byte message headers)
 * and pushed as one view of the chunk, so the binary COPY decoder gets
 * large contiguous spans and no byte is copied into a new buffer. A payload
 * split across chunks needs no copy either: the decoder takes its bytes in
 * any cut.
 *
 * Protocol: CopyOutResponse 'H', NoticeResponse 'N', ParameterStatus 'S'
 * and NotificationResponse 'A' are skipped; at CopyDone 'c' (or any other
 * message) the socket goes back to pg with the bytes after it, and pg hands
 * us CommandComplete 'C' and ReadyForQuery 'Z'. At ErrorResponse 'E' the
 * socket goes back to pg with the bytes from the 'E' on, and pg calls
 * `handleError`: the stream fails with pg's error (a `pg_cancel_backend`
 * gives SQLSTATE 57014, which the session turns into `cancelled`).
 *
 * Back-pressure: the socket is paused until the consumer first reads and
 * while it is behind. A destroyed stream still reads (and drops) the rest
 * of the COPY, so the connection stays usable for the cleanup statements
 * after it.
 *
 * Rewriting a chunk in place is safe because a socket's 'data' chunk is a
 * buffer of its own read (net and tls allocate one per read) that only
 * this listener sees while it holds the socket; a socket that reused one
 * buffer across reads (an `onread` option) would need a copy here.
 */
import type pg from 'pg';
import { Readable } from 'node:stream';
import { EngineError } from '../errors.js';

const COPY_DATA = 0x64; // 'd'
const ERROR_RESPONSE = 0x45; // 'E'
const COPY_OUT_RESPONSE = 0x48; // 'H'
const NOTICE_RESPONSE = 0x4e; // 'N'
const PARAMETER_STATUS = 0x53; // 'S'
const NOTIFICATION_RESPONSE = 0x41; // 'A'

type DataHandler = (chunk: Buffer) => void;

export class PgCopyOut extends Readable {
  /** Rows PostgreSQL reported copied (its CommandComplete tag). */
  rowCount = 0;
  readonly #text: string;
  #connection: pg.Connection | undefined;
  #pgHandler: DataHandler | undefined;
  readonly #onData: DataHandler = (chunk) => this.#parse(chunk);
  /** The message header being read: its bytes so far (up to 5). */
  readonly #header = Buffer.alloc(5);
  #headerBytes = 0;
  /** The message being read: its type and the payload bytes still to come. */
  #code = 0;
  #left = 0;
  /** A message a COPY TO does not send is being skipped; the data ends after it. */
  #ending = false;
  #paused = false;

  constructor(text: string) {
    // A socket chunk per push: room for a few before the socket pauses.
    super({ highWaterMark: 1 << 20 });
    this.#text = text;
  }

  /** pg's Submittable entry point: takes the socket's data events, then sends the statement. */
  submit(connection: pg.Connection): void {
    const stream = connection.stream;
    const handlers = stream.listeners('data') as DataHandler[];
    if (handlers.length !== 1) throw new EngineError('internal', `COPY TO: the connection's socket has ${handlers.length} data listeners where pg's parser alone was expected`);
    this.#connection = connection;
    this.#pgHandler = handlers[0]!;
    stream.removeListener('data', this.#pgHandler);
    stream.on('data', this.#onData);
    // Nothing is read before the consumer asks (its first _read): an error reply
    // must find it listening, not be thrown as an unhandled 'error' event.
    stream.pause();
    this.#paused = true;
    connection.query(this.#text);
  }

  handleError(err: Error): void {
    this.destroy(err);
  }

  handleCommandComplete(msg: { text?: string } | undefined): void {
    const match = /COPY (\d+)/.exec(msg?.text ?? '');
    if (match) this.rowCount = Number(match[1]);
  }

  handleReadyForQuery(): void {}

  override _read(): void {
    if (this.#paused && this.#connection !== undefined) {
      this.#paused = false;
      this.#connection.stream.resume();
    }
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Read on (dropping the data) to CopyDone so pg gets its connection back.
    if (this.#paused && this.#connection !== undefined) {
      this.#paused = false;
      this.#connection.stream.resume();
    }
    callback(err);
  }

  #parse(buf: Buffer): void {
    const len = buf.length;
    let p = 0;
    /** The end of the payload bytes moved to the front of the span at `start`. */
    let w = 0;
    while (p < len) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, len - p);
        if (this.#code === COPY_DATA) {
          if (w !== p) buf.copyWithin(w, p, p + n);
          w += n;
        }
        p += n;
        this.#left -= n;
        if (this.#left === 0 && this.#ending) return this.#detach(buf, w, p);
        continue;
      }
      if (this.#headerBytes === 0 && len - p >= 5) {
        this.#code = buf[p]!;
        if (this.#code === ERROR_RESPONSE) return this.#detach(buf, w, p);
        this.#left = buf.readUInt32BE(p + 1) - 4;
        p += 5;
      } else {
        if (this.#headerBytes === 0 && buf[p] === ERROR_RESPONSE) return this.#detach(buf, w, p);
        while (this.#headerBytes < 5 && p < len) this.#header[this.#headerBytes++] = buf[p++]!;
        if (this.#headerBytes < 5) break;
        this.#headerBytes = 0;
        this.#code = this.#header[0]!;
        this.#left = this.#header.readUInt32BE(1) - 4;
      }
      switch (this.#code) {
        case COPY_DATA:
        case COPY_OUT_RESPONSE:
        case NOTICE_RESPONSE:
        case PARAMETER_STATUS:
        case NOTIFICATION_RESPONSE:
          break;
        default:
          // CopyDone (or a message a COPY TO does not send, skipped first): pg reads on from CommandComplete.
          if (this.#left === 0) return this.#detach(buf, w, p);
          this.#ending = true;
      }
    }
    this.#flush(buf, w);
  }

  /** Pushes the payload bytes moved to the chunk's front; pauses the socket when the consumer is behind. */
  #flush(buf: Buffer, w: number): void {
    if (w === 0 || this.destroyed) return;
    if (!this.push(buf.subarray(0, w)) && !this.#paused) {
      this.#paused = true;
      this.#connection!.stream.pause();
    }
  }

  /** The COPY's data ended at `p`: pushes what there is, ends the stream, gives pg the socket and the bytes from `p`. */
  #detach(buf: Buffer, w: number, p: number): void {
    const connection = this.#connection!;
    const pgHandler = this.#pgHandler!;
    const code = buf[p];
    this.#flush(buf, w);
    const stream = connection.stream;
    stream.removeListener('data', this.#onData);
    stream.on('data', pgHandler);
    this.#connection = undefined;
    this.#pgHandler = undefined;
    // An error ends the stream through handleError instead.
    if (code !== ERROR_RESPONSE && !this.destroyed) this.push(null);
    if (p < buf.length) pgHandler(buf.subarray(p));
    this.#paused = false;
    // The consumer may have paused the socket; pg needs the messages after the COPY's data.
    process.nextTick(() => stream.resume());
  }
}
