/**
 * A TCP gate in front of a server, for tests that decide when one client may reach it again:
 * while shut, connections are accepted and closed at once (a client sees its dial fail and
 * retries); while open, each connection is piped to the target. A connection ends on both
 * sides when either side ends, so a target that dies drops its clients as it would directly.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpGate {
  /** The port clients dial (127.0.0.1). */
  readonly port: number;
  /** Lets connections through from now on. */
  open(): void;
  /** Refuses new connections from now on (those piped already stay). */
  shut(): void;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/** Starts a gate (open) to 127.0.0.1:`targetPort` on a free port. */
export async function startTcpGate(targetPort: number): Promise<TcpGate> {
  let isOpen = true;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    track(client);
    client.on('error', () => undefined);
    if (!isOpen) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the gate has no port');
  return {
    port: address.port,
    open: () => {
      isOpen = true;
    },
    shut: () => {
      isOpen = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
