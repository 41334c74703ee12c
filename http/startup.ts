/**
 * The daemon's HTTP server from its first moment: it listens before the
 * store is opened and recovery runs (which can take seconds), answering
 * `/health` with `503 {"status":"starting"}` and every other request with
 * `503` and `Retry-After`, so a supervisor can tell "starting" from "dead".
 * Once the daemon is ready, `ready(handler)` hands every later request to the
 * Koa app. The server timeouts are set here too.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { installClientErrorHandler } from './client-error.js';

/**
 * Server timeouts. headers: a client has this long to send its request line
 * and headers; request: to send the whole request (bodies are at most 1 MiB);
 * keep-alive: an idle connection is closed after this. A response may take
 * as long as it needs (execution output streams stay open).
 */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 60_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export function applyServerTimeouts(server: Server): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
}

function starting(version: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    const error = 'the daemon is starting: recovery is not done yet';
    const body = JSON.stringify(path === '/health' ? { status: 'starting', version, error, code: 'unavailable' } : { error, code: 'unavailable' });
    res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Retry-After': '1' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

export interface StartingServer {
  readonly server: Server;
  /** Serves every later request with `handler`. */
  ready(handler: RequestListener): void;
}

export function startingServer(version: string): StartingServer {
  let handler: RequestListener = starting(version);
  const server = createServer((req, res) => handler(req, res));
  installClientErrorHandler(server);
  applyServerTimeouts(server);
  return { server, ready: (h) => void (handler = h) };
}
