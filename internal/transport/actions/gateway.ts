/**
 * The open v1 connections of both socket transports: admits new ones up to
 * `maxConnections`, keeps counts, and closes them all on shutdown. It logs one line
 * when a connection opens (or is refused) and one when it closes, at info.
 */
import { closeCodeOf, LocusError } from '../../errors.js';
import { encodeFrameError } from './codec.js';
import { Session, type SessionDeps, type Wire } from './session.js';
import type { SocketTransport } from './v1-observer.js';

export interface GatewayStats {
  connections: number;
  /** Events dropped for slow consumers since start. */
  droppedEvents: number;
}

/** Where a connection comes from, for its log lines. */
export interface ConnectionInfo {
  transport: 'websocket' | 'tcp';
  remoteAddress: string | undefined;
}

interface Connection extends ConnectionInfo {
  opened: number;
  /** The close code and reason the server sent; absent when the peer went first. */
  closeCode?: number;
  closeReason?: string;
}

/** The wire, noting the close code and reason the session closes it with. */
function recordingWire(wire: Wire, connection: Connection, transport: SocketTransport): Wire {
  return {
    send: (text) => wire.send(text),
    bufferedBytes: () => wire.bufferedBytes(),
    close: (code, reason) => {
      connection.closeCode ??= code;
      connection.closeReason ??= reason;
      wire.close(code, reason);
    },
    pause: () => wire.pause(),
    resume: () => wire.resume(),
    remoteAddress: wire.remoteAddress,
    transport,
  };
}

export class ActionGateway {
  private readonly sessions = new Set<Session>();
  private accepting = true;
  private droppedByClosed = 0;

  constructor(
    private readonly deps: SessionDeps,
    private readonly maxConnections: number,
  ) {}

  /** A new connection; null when it was refused (it has been told why and is being closed). */
  open(wire: Wire, info: ConnectionInfo): Session | null {
    const { logger } = this.deps;
    const refusal = !this.accepting
      ? new LocusError('unavailable', 'the server is shutting down')
      : this.sessions.size >= this.maxConnections
        ? new LocusError('unavailable', `too many connections (at most ${this.maxConnections})`)
        : null;
    if (refusal !== null) {
      logger.info({ ...info, reason: refusal.message }, 'connection refused');
      wire.send(encodeFrameError(refusal));
      wire.close(closeCodeOf(refusal), refusal.code);
      return null;
    }
    const connection: Connection = { ...info, opened: Date.now() };
    logger.info(info, 'connection opened');
    const transport: SocketTransport = info.transport === 'websocket' ? 'ws' : 'tcp';
    this.deps.observer?.connectionOpened(transport);
    const session = new Session(
      this.deps,
      recordingWire(wire, connection, transport),
      (closed) => {
        if (this.sessions.delete(closed)) {
          this.droppedByClosed += closed.dropped;
          this.deps.observer?.connectionClosed(transport);
        }
        const { opened, ...fields } = connection;
        logger.info({ ...fields, durationMs: Date.now() - opened, closedBy: fields.closeCode === undefined ? 'peer' : 'server' }, 'connection closed');
      },
    );
    this.sessions.add(session);
    return session;
  }

  stats(): GatewayStats {
    let dropped = this.droppedByClosed;
    for (const session of this.sessions) dropped += session.dropped;
    return { connections: this.sessions.size, droppedEvents: dropped };
  }

  /** Refuses new connections, lets each answer the message in hand, then closes them (`unavailable`). */
  async shutdown(): Promise<void> {
    this.accepting = false;
    await Promise.all([...this.sessions].map((session) => session.shutdown()));
  }
}
