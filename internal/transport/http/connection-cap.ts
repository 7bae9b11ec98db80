/**
 * The cap on the HTTP listener's open sockets (LOCUS_MAX_HTTP_CONNECTIONS): past it, a new
 * socket is admitted only to be told why it is refused. Its first request gets 503
 * `unavailable` with `Connection: close` (a WebSocket upgrade the same, from the upgrade
 * handler), instead of the process running out of file descriptors; one that sends
 * nothing is closed by the header timeout. Node's own `server.maxConnections` would drop
 * such sockets without a word.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, LocusError } from '../../errors.js';

export interface ConnectionCap {
  /** Whether requests on this socket are to be refused. */
  refuses(socket: unknown): boolean;
  /** Why (the error a refused request is answered with). */
  readonly refusal: LocusError;
  /** Every open socket of the listener (admitted or not), for shutdown. */
  readonly sockets: ReadonlySet<Socket>;
}

export function capConnections(server: Server, maxConnections: number): ConnectionCap {
  const sockets = new Set<Socket>();
  const refused = new WeakSet<object>();
  const refusal = new LocusError('unavailable', `too many connections (at most ${maxConnections}); retry later`, {
    headers: { 'Retry-After': '1', Connection: 'close' },
  });
  // Refused sockets still open: they do not count against the cap.
  let refusedOpen = 0;
  server.on('connection', (socket: Socket) => {
    const refuse = sockets.size - refusedOpen >= maxConnections;
    if (refuse) {
      refused.add(socket);
      refusedOpen++;
    }
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (refuse) refusedOpen--;
    });
  });
  return { refuses: (socket) => typeof socket === 'object' && socket !== null && refused.has(socket), refusal, sockets };
}

/** Answers a request on a refused socket (outside express: it never reaches the application). */
export function answerRefused(res: ServerResponse, refusal: LocusError): void {
  const body = JSON.stringify(errorBody(refusal));
  res.writeHead(refusal.status, { ...refusal.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
