/**
 * Errors Node's HTTP parser raises before Koa sees a request (a malformed
 * `Content-Length`, a URL or headers over the 16 KB limit, garbage instead
 * of HTTP): Node's default answers with an empty body. Every 4xx of the API
 * carries `{error, code}`, so these get one too, and the connection closes.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const STATUS_TEXT: Readonly<Record<number, string>> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function answer(err: NodeJS.ErrnoException): { status: number; error: string; code: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: 'request line and headers exceed 16 KB', code: 'bad_request' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'request timed out before it was complete', code: 'bad_request' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, error: 'invalid Content-Length header', code: 'bad_request' };
    default:
      return { status: 400, error: 'malformed HTTP request', code: 'bad_request' };
  }
}

export function installClientErrorHandler(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or an already-answered socket has nobody left to tell.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const a = answer(err);
    const body = JSON.stringify({ error: a.error, code: a.code });
    socket.end(
      `HTTP/1.1 ${a.status} ${STATUS_TEXT[a.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
