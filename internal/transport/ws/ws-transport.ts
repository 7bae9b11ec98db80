/**
 * The v1 protocol over WebSocket (`GET /v1/ws`, also `/ws`, on the HTTP listener). It only frames
 * and writes; everything else is the session's. A message over the size limit gets a
 * `too_large` error message, then close code 1009 (as a TCP line over the limit does),
 * once received whole; one over twice the limit is refused by `ws` itself while it
 * arrives, with close code 1009 alone (so that no message larger than that is ever
 * buffered). While an idle timeout is set, the server pings each connection every half
 * timeout and a pong counts as a sign of life. Each connection has its own ping timer,
 * started at a random point of the first half timeout: pinging every connection in one
 * go held the event loop for as long as all those socket writes took (one per
 * connection), delaying every connection's traffic at once, every half timeout.
 */
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { errorBody, LocusError } from '../../errors.js';
import type { ActionGateway } from '../actions/gateway.js';
import type { Session, Wire } from '../actions/session.js';

export const wsPath = '/v1/ws';
/** Every path the WebSocket endpoint answers: `/v1/ws` (canonical) and `/ws` (Hivekit's client suite). */
export const wsPaths: readonly string[] = [wsPath, '/ws'];

export interface WsOptions {
  maxMessageBytes: number;
  idleTimeoutMs: number;
  /** A frame once begun must arrive whole within this time. */
  partialTimeoutMs: number;
  closeGraceMs: number;
  /** Why an upgrade on this socket is refused (the listener's connection cap), or null. */
  refusal?: (socket: Duplex) => LocusError | null;
}

export interface WsEndpoint {
  /** Refuses new upgrades; open connections are the gateway's to close. */
  stopAccepting(): void;
  /** Cuts whatever is still open. */
  destroyAll(): void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function socketWire(ws: WebSocket, remoteAddress: string, closeGraceMs: number): Wire {
  return {
    send: (text) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    },
    bufferedBytes: () => ws.bufferedAmount,
    close: (code, reason) => {
      ws.close(code, reason.slice(0, 120));
      setTimeout(() => ws.terminate(), closeGraceMs).unref();
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    remoteAddress,
  };
}

function byteLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, part) => sum + part.length, 0) : data.byteLength;
}

function text(data: RawData): string | null {
  const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Answers a refused upgrade with an HTTP error in the v2 body and closes the socket. */
function refuse(socket: Duplex, err: LocusError): void {
  const body = JSON.stringify(errorBody(err));
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Bytes that arrive start a clock that a whole frame (a message, a ping, a pong) stops: a
 * peer that sends part of a frame and stalls is closed. While the server has stopped
 * reading the connection, the wait is not the peer's. (A chunk that ends one frame and
 * begins the next stops the clock; a stall after that is the idle timeout's.)
 */
function watchPartialFrames(ws: WebSocket, socket: Duplex, session: Session, timeoutMs: number): void {
  let timer: NodeJS.Timeout | null = null;
  const stalled = (): void => {
    timer = null;
    if (ws.isPaused) {
      timer = setTimeout(stalled, timeoutMs).unref();
      return;
    }
    session.abort(new LocusError('timeout', `a frame was begun and not ended within ${timeoutMs} ms`));
  };
  const whole = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  // Before ws reads the chunk: a frame it completes stops the clock this starts.
  socket.prependListener('data', () => {
    timer ??= setTimeout(stalled, timeoutMs).unref();
  });
  ws.on('message', whole);
  ws.on('ping', whole);
  ws.on('pong', whole);
  ws.once('close', whole);
}

export function attachWebSocket(server: Server, gateway: ActionGateway, options: WsOptions): WsEndpoint {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 2 * options.maxMessageBytes, perMessageDeflate: false });
  const tooLarge = new LocusError('too_large', `a message is longer than ${options.maxMessageBytes} bytes`);
  const live = new Map<WebSocket, Session>();
  const pingEveryMs = options.idleTimeoutMs > 0 ? Math.max(1, Math.floor(options.idleTimeoutMs / 2)) : null;
  let accepting = true;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const path = (req.url ?? '').split('?')[0];
    if (path === undefined || !wsPaths.includes(path)) {
      refuse(socket, new LocusError('not_found', `no WebSocket endpoint at ${(path ?? '').slice(0, 256)}; use ${wsPath}`));
      return;
    }
    if (!accepting) {
      refuse(socket, new LocusError('unavailable', 'the server is shutting down'));
      return;
    }
    const capped = options.refusal?.(socket) ?? null;
    if (capped !== null) {
      refuse(socket, capped);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, socket, req));
  };

  const connect = (ws: WebSocket, socket: Duplex, req: IncomingMessage): void => {
    ws.on('error', () => undefined);
    const remoteAddress = req.socket.remoteAddress ?? 'unknown';
    const session = gateway.open(socketWire(ws, remoteAddress, options.closeGraceMs), { transport: 'websocket', remoteAddress });
    if (session === null) return;
    live.set(ws, session);
    watchPartialFrames(ws, socket, session, options.partialTimeoutMs);
    if (pingEveryMs !== null) {
      const ping = (): void => {
        if (ws.readyState !== ws.OPEN) return;
        ws.ping();
        pinger = setTimeout(ping, pingEveryMs).unref();
      };
      let pinger = setTimeout(ping, Math.random() * pingEveryMs).unref();
      ws.once('close', () => clearTimeout(pinger));
    }
    ws.on('message', (data, isBinary) => {
      if (byteLength(data) > options.maxMessageBytes) {
        ws.pause();
        session.receiveFatal(tooLarge);
        return;
      }
      // Text frames are valid UTF-8 (ws checks); binary frames are decoded here.
      const decoded = isBinary ? text(data) : (data as Buffer).toString('utf8');
      if (decoded === null) session.receiveUndecodable();
      else session.receive(decoded);
    });
    ws.on('pong', () => session.touch());
    ws.on('close', () => {
      live.delete(ws);
      session.closed();
    });
  };

  server.on('upgrade', onUpgrade);

  return {
    stopAccepting: () => {
      accepting = false;
    },
    destroyAll: () => {
      for (const ws of live.keys()) ws.terminate();
      server.off('upgrade', onUpgrade);
      wss.close();
    },
  };
}
