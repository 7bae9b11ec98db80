/**
 * The contract between the Hivekit v1 dispatcher (dispatcher.ts) and the handlers of each
 * message type (handlers/*.ts). The wire is ../../../docs/reference/hivekit-compat.md: a
 * message is a JSON object with `typ`, `act`, an optional `cid` (echoed in its one reply)
 * and entity fields as top-level keys (`id`, `rea`, `lab`, `loc`, `dat`, `sty`, `sha`,
 * `tds`, …). The dispatcher reads the envelope, finds the handler, enters the realm (401,
 * 403, 429, 404 `unknown realm <id>`), runs it, and turns its answer or its LocusError into
 * the reply (`res`, `err`, `erc`). Handlers only read their keys, call services and shape
 * the reply's payload; unknown keys are ignored (compat 3.7), bad values are LocusErrors.
 */
import type { Principal, Right } from '../../auth/principal.js';
import type { SocketTransport } from './v1-observer.js';
import type { Realm } from '../../domain/types.js';
import type { EventSink } from '../../service/subscriptions.js';
import type { SubscriberConnection } from '../../service/live/push-port.js';

/** One message as received. */
export interface V1Message {
  typ: string;
  act: string;
  /** The correlation id, echoed in the reply; absent: the same reply without it (a successful `set`: none). */
  cid?: string;
  /** The whole message object (`id`, `rea`, `lab`, `loc`, `dat`, … as sent; not validated). */
  raw: Readonly<Record<string, unknown>>;
}

/**
 * A handler's answer: the top-level keys its success reply adds to `typ`, `act`, `cid` and
 * `res:"suc"` (usually `dat`; `nxt` for a list page that is not the last). `null`: a successful
 * `set`, answered only on a socket and only for a `cid` (or `rid`) (compat 1.3 and 3.5).
 */
export type V1Answer = Readonly<Record<string, unknown>> | null;

/**
 * A v1 connection as the live features see it (WebSocket or TCP; none over HTTP): Hivekit
 * subscriptions (through their push port), pub/sub and presence hold on to it and push
 * through it.
 */
export interface V1Connection extends SubscriberConnection {
  /** Unique within the process, for maps and logs. */
  readonly id: string;
  /** The principal the connection signed in with. */
  readonly principal: Principal;
  /**
   * Queues messages (each one element of a frame: `{typ:"sub",id,uty,obj}`, a pub/sub
   * delivery, …) to be written in one frame after every reply already due, never in the
   * same write as a reply (compat 5.4). Dropped when the connection is closed or too slow.
   */
  push(messages: readonly object[]): void;
  /** Runs once when the connection ends, whatever the cause (subscriptions, pub/sub, presence clean up). */
  onClose(listener: () => void): void;
  /** Which socket carries it (metrics, traces); absent: not said. */
  readonly transport?: SocketTransport;
}

export interface V1Caller {
  principal: Principal;
  /** The connection; null over HTTP (`/v1/http`, `/api/v1`), which has no push channel. */
  connection: V1Connection | null;
  /**
   * Where the locus extension's `evt` events go (`sub sub`, handlers/legacy-events.ts): the
   * connection's session; null or absent over HTTP.
   */
  sink?: EventSink | null;
  /** When the frame was read (performance.now()), set by the dispatcher while it has an observer. */
  readAt?: number;
}

/**
 * Where a handler's realm is named: `rea` (objects, areas, subscriptions, search, history),
 * `id` (realm actions and pub/sub), or nowhere (system actions, realm list and create, which
 * check their rights themselves). A message without its realm key uses the principal's own
 * realm when it has one (opaque realm tokens), else is refused with 400.
 */
export type RealmKey = 'rea' | 'id' | 'none';

export interface V1Handler {
  realm: RealmKey;
  /**
   * The right the action needs (`per` letter; opaque tokens: R needs scope read, C/U/D
   * write). Checked by the dispatcher on the realm; handlers that act on entity ids check
   * the id glob of `per` themselves through `allowedOn` (auth/rights.ts).
   */
  need: Right;
  /**
   * An object write: the actions after it may start while it is in flight (see dispatcher),
   * for ObjectService applies writes of one object in the order they are called
   * (service/write-order.ts) and pipelined writes of different objects share one commit.
   */
  ordered?: true;
  /** Objects written (for the dispatcher's yield rule); default 1. */
  weight?(message: V1Message): number;
  /**
   * Optional, for `ordered` writes: runs several messages at once. The dispatcher hands it
   * a run of consecutive messages of one frame whose handlers share `group`, that name the
   * same realm and distinct string `id`s (each message counted on its own, as always; the
   * realm looked up once); it answers each as `run` would, in order, and must hand its work
   * to the object service before its first await. What it saves is per-message overhead, never
   * semantics.
   */
  batch?: V1Batch;
  /** `realm` is null exactly when `this.realm` is `none`. */
  run(message: V1Message, realm: Realm | null, caller: V1Caller): Promise<V1Answer>;
}

export interface V1Batch {
  /** Handlers whose messages may share a run. */
  group: string;
  /**
   * For each message, in order: its answer, or the error it fails with (alone). One promise
   * for the run, not one per message; a rejection fails every message of the run with it.
   */
  run(messages: readonly V1Message[], realm: Realm, caller: V1Caller): Promise<(V1Answer | Error)[]>;
}

/** `typ` → `act` → handler. Each handlers/*.ts module exports one fragment; handlers/index.ts joins them. */
export type V1HandlerTable = Readonly<Record<string, Readonly<Record<string, V1Handler>>>>;
