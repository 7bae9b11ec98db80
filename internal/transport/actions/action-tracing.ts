/**
 * What the v1 dispatcher and sessions tell tracing (observability/tracing implements it):
 * given only when tracing is on, so that with tracing off they only check that it is absent.
 */
import type { SocketTransport } from './v1-observer.js';
import type { V1Reply } from './codec.js';
import type { V1Caller, V1Message } from './v1-handler.js';

/**
 * A message under way: its reply to come; or a run of messages (runBatch): their replies to
 * come, in order, as one promise. In an object: an async function would wait for it.
 */
export type Begun = { reply: Promise<V1Reply | null> } | { replies: Promise<(V1Reply | null)[]> };

export interface ActionTracing {
  /**
   * Runs `begin` (a message's handling until its reply is under way; or that of a run of
   * `count` batched messages) in a span of the action, which ends when the reply settles.
   * `known`: the handler table has the message's `typ` and `act`.
   */
  action<B extends Begun>(message: V1Message, known: boolean, count: number, caller: V1Caller, begin: () => Promise<B>): Promise<B>;
}

/** What became of pushed messages: written to the socket, held until a reply goes out, or dropped (slow consumer). */
export type PushOutcome = 'written' | 'held' | 'dropped';

export interface PushTracing {
  /** Starts a span for a push of `count` messages to a subscriber; the function returned ends it. */
  push(transport: SocketTransport | undefined, count: number): (outcome: PushOutcome) => void;
}
