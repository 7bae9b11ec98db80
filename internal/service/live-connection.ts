/**
 * A connection as the live services (pub/sub, presence) see it: what they hold on to and
 * push through. The v1 transport's V1Connection (transport/actions/v1-handler.ts) is one;
 * the services depend on this port, not on the transport.
 */
import type { Principal } from '../auth/principal.js';

export interface LiveConnection {
  /** Unique within the process. */
  readonly id: string;
  /** The principal the connection signed in with. */
  readonly principal: Principal;
  /** Queues messages for the connection's next push frame (never in the same write as a reply). */
  push(messages: readonly object[]): void;
  /** Runs once when the connection ends, whatever the cause. */
  onClose(listener: () => void): void;
}
