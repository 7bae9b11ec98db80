/**
 * What the v1 transports tell an observer (the metrics, observability/metrics/v1-metrics.ts):
 * each message answered, connections opened and closed, events dropped for slow readers,
 * socket sign-ins refused. Called on the hot path: an observer keeps each call cheap.
 */
import type { LocusError } from '../../errors.js';

export type SocketTransport = 'ws' | 'tcp';
export type V1Transport = 'http' | SocketTransport;

export interface V1Observer {
  /**
   * A message answered: its `typ` and `act` as the client sent them (any string, or null when
   * absent: the observer bounds them), its result code (200 for a success, else the error's
   * status), and when its frame was read (performance.now()).
   */
  answered(transport: V1Transport, typ: string | null, act: string | null, status: number, readAt: number): void;
  connectionOpened(transport: SocketTransport): void;
  connectionClosed(transport: SocketTransport): void;
  /** Events or pushed messages not sent to a connection that read too slowly. */
  dropped(transport: SocketTransport, count: number): void;
  /** A socket sign-in refused (`tokenGiven`: false when no `Bearer <token>` came). */
  signInRefused(transport: SocketTransport, error: LocusError, tokenGiven: boolean): void;
}
