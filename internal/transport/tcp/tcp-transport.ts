/**
 * The raw TCP listener of the v1 protocol (LOCUS_TCP_PORT): newline-delimited JSON.
 * It only frames lines and writes them; everything else is the session's.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { LocusError } from '../../errors.js';
import type { ActionGateway } from '../actions/gateway.js';
import type { Wire } from '../actions/session.js';
import { LineFramer, type Frame } from './line-framer.js';

export interface TcpOptions {
  host: string;
  port: number;
  maxLineBytes: number;
  /** How long a closing connection may take to flush before it is cut. */
  closeGraceMs: number;
  /** A line once begun must end within this time. */
  partialTimeoutMs: number;
}

export interface TcpListener {
  readonly port: number;
  /** Stops accepting; open connections are the gateway's to close. */
  stopAccepting(): Promise<void>;
  /** Cuts whatever is still open. */
  destroyAll(): void;
}

function socketWire(socket: Socket, closeGraceMs: number): Wire {
  return {
    send: (text) => {
      if (socket.writable) socket.write(text + '\n');
    },
    bufferedBytes: () => socket.writableLength,
    close: () => {
      socket.end();
      setTimeout(() => socket.destroy(), closeGraceMs).unref();
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    remoteAddress: socket.remoteAddress ?? 'unknown',
  };
}

function serve(socket: Socket, gateway: ActionGateway, options: TcpOptions): void {
  socket.setNoDelay(true);
  const session = gateway.open(socketWire(socket, options.closeGraceMs), { transport: 'tcp', remoteAddress: socket.remoteAddress });
  socket.on('error', () => undefined);
  if (session === null) {
    socket.resume();
    return;
  }
  const framer = new LineFramer(options.maxLineBytes);
  const tooLong = new LocusError('too_large', `a line is longer than ${options.maxLineBytes} bytes`);
  const take = (frames: Frame[]): void => {
    for (const frame of frames) {
      if (frame.kind === 'line') {
        // Blank lines (a terminal's bare Enter) are not messages.
        if (frame.text.trim() !== '') session.receive(frame.text);
      } else if (frame.kind === 'invalid_utf8') {
        session.receiveUndecodable();
      } else {
        socket.pause();
        session.receiveFatal(tooLong);
      }
    }
  };
  // A line begun and not ended holds its bytes: a peer that stalls mid-line is closed
  // (while the server itself has stopped reading, the wait is not the peer's).
  let partialTimer: NodeJS.Timeout | null = null;
  const stalled = (): void => {
    partialTimer = null;
    if (socket.isPaused()) {
      partialTimer = setTimeout(stalled, options.partialTimeoutMs).unref();
      return;
    }
    session.abort(new LocusError('timeout', `a line was begun and not ended within ${options.partialTimeoutMs} ms`));
  };
  socket.on('data', (chunk: Buffer) => {
    take(framer.push(chunk));
    if (!framer.partial) {
      if (partialTimer !== null) clearTimeout(partialTimer);
      partialTimer = null;
    } else if (partialTimer === null) {
      partialTimer = setTimeout(stalled, options.partialTimeoutMs).unref();
    }
  });
  socket.on('end', () => {
    // The peer finished sending (half-close): answer what it sent, then close our side.
    take(framer.end());
    session.receiveEnd();
  });
  socket.on('close', () => {
    if (partialTimer !== null) clearTimeout(partialTimer);
    session.closed();
  });
}

export async function listenTcp(gateway: ActionGateway, options: TcpOptions): Promise<TcpListener> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serve(socket, gateway, options);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    stopAccepting: () => new Promise((resolve) => server.close(() => resolve())),
    destroyAll: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}
