/**
 * The open v1 connections of both socket transports: admits new ones up to
 * `maxConnections`, keeps counts, and closes them all on shutdown.
 */
import { closeCodeOf, LocusError } from '../../errors.js';
import { encodeMessageError } from './codec.js';
import { Session, type SessionDeps, type Wire } from './session.js';

export interface GatewayStats {
  connections: number;
  /** Events dropped for slow consumers since start. */
  droppedEvents: number;
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
  open(wire: Wire): Session | null {
    const refusal = !this.accepting
      ? new LocusError('unavailable', 'the server is shutting down')
      : this.sessions.size >= this.maxConnections
        ? new LocusError('unavailable', `too many connections (at most ${this.maxConnections})`)
        : null;
    if (refusal !== null) {
      wire.send(encodeMessageError(refusal));
      wire.close(closeCodeOf(refusal), refusal.code);
      return null;
    }
    const session = new Session(this.deps, wire, (closed) => {
      if (this.sessions.delete(closed)) this.droppedByClosed += closed.dropped;
    });
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
