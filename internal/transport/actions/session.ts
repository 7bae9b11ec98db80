/**
 * One v1 connection (WebSocket or TCP), whatever carries it: the handshake, the answer
 * to each message in arrival order, pushed events, timeouts and flow control. The
 * transport only frames: it hands in each message's text and provides a Wire.
 *
 * Pipelining (the ordering contract: service/write-order.ts): a message starts once the one
 * before it has begun, up to `maxPipelined` messages whose replies are not sent yet. The
 * writes of messages that arrived together so share one commit, as a larger batch would;
 * replies still go out in arrival order, and the events a message causes after its reply.
 *
 * Flow control: replies are never dropped; while more than `sendBufferBytes` wait to
 * be sent, the session stops reading (so a client that does not read its replies
 * stops being served) and drops events, counting them. When the buffer drains, the
 * client is told how many it missed (`sys`/`err`, code `slow_consumer`). A connection
 * still over the limit `slowConsumerMs` after it first dropped is closed. Nothing here
 * waits on a slow peer, so ingest and other connections never do either.
 */
import type { Logger } from 'pino';
import { bearerSecret, type Principal } from '../../auth/authenticator.js';
import { hashSecret } from '../../auth/tokens.js';
import type { BuildInfo } from '../../build-info.js';
import { closeCodeOf, invalid, LocusError, toLocusError } from '../../errors.js';
import type { SubscriptionEvent } from '../../domain/events.js';
import type { Access } from '../../service/access.js';
import type { SubscriptionUpdate } from '../../service/live/push-port.js';
import type { EventSink, Subscriptions } from '../../service/subscriptions.js';
import {
  encodeAuthFailure,
  encodeAuthSuccess,
  encodeEventMessages,
  encodeFrameError,
  encodePush,
  encodeReplies,
  parseFrame,
  type V1Reply,
} from './codec.js';
import type { PushOutcome, PushTracing } from './action-tracing.js';
import type { Dispatcher } from './dispatcher.js';
import { subscriptionMessages } from './subscription-pushes.js';
import type { V1Connection } from './v1-handler.js';
import type { SocketTransport, V1Observer } from './v1-observer.js';
import { splitRealmKey } from '../../domain/realm-key.js';

/** What a transport provides to a session. */
export interface Wire {
  /** Writes one message (a WebSocket text frame, a TCP line). */
  send(text: string): void;
  /** Bytes written but not yet handed to the operating system. */
  bufferedBytes(): number;
  /** Ends the connection after what is queued (WebSocket: a close frame with this code). */
  close(code: number, reason: string): void;
  /** Stops reading input (backpressure). */
  pause(): void;
  resume(): void;
  /** The peer's address, for logs and the per-address limit on failed authentications. */
  readonly remoteAddress: string;
  /** Which socket it is (metrics); absent: not said. */
  readonly transport?: SocketTransport;
}

export interface SessionLimits {
  handshakeTimeoutMs: number;
  /** 0: never. */
  idleTimeoutMs: number;
  sendBufferBytes: number;
  slowConsumerMs: number;
  /** How often a quiet connection re-checks its token, so that a revoked one stops receiving events. */
  tokenRecheckMs: number;
  /**
   * The characters of the messages under way (started, reply not sent) past which the next
   * waits for the oldest reply (the first always starts). It bounds what one connection
   * hands the store in one turn of the event loop, so that a client sending large batches
   * back to back does not hold the loop for several of them at once.
   */
  pipelineChars: number;
  /** Actions in one message (LOCUS_MAX_ACTIONS); a longer message is refused whole. */
  maxActions: number;
}

export interface SessionDeps {
  access: Access;
  dispatcher: Dispatcher;
  subscriptions: Subscriptions;
  build: BuildInfo;
  limits: SessionLimits;
  logger: Logger;
  /** Hears of each signed-in connection: presence claims of data providers (JWT `dpv`, compat 6). */
  presence?: { connectionOpened(connection: V1Connection): void };
  /** A span per push to the subscriber (observability/tracing); absent while tracing is off. */
  tracing?: PushTracing;
  /** Hears of messages answered, events dropped and sign-ins refused (metrics). */
  observer?: V1Observer;
  /**
   * The principal of a signed-in secret's hash when memory decides it (Access.heldPrincipal),
   * so that the check at every message needs no promise; absent: each asks access.authenticate.
   */
  heldPrincipal?: (hash: string) => Principal | undefined;
}

type Inbound =
  | { kind: 'text'; text: string }
  | { kind: 'undecodable' }
  | { kind: 'fatal'; error: LocusError }
  | { kind: 'end' };

type State = 'handshake' | 'open' | 'closing' | 'closed';

/** What a started message's turn writes: its reply frame (null: no reply is due), or the end of the connection. */
type Reply = { text: string | null } | { abort: LocusError };

/** What waits for the replies of the messages started before it: events (`evt`) or a push frame. */
type Held = { seq: number; events: readonly SubscriptionEvent[] } | { seq: number; push: string; count: number };

let connectionCount = 0;

/** Messages read ahead of the one being answered before the session stops reading. */
const maxInbox = 16;
/** WebSocket close code 1001: the server goes away. */
const goingAway = 1001;

/** Messages started whose replies are not sent yet; the next waits for the oldest reply (see also pipelineChars). */
const maxPipelined = 8;
/** How often a session waiting for its send buffer to drain looks again. */
const drainPollMs = 5;

const settled: Promise<void> = Promise.resolve();

/** A message's reply frame from its replies (none: no reply is due). */
function replyFrame(replies: readonly V1Reply[]): Reply {
  return { text: replies.length === 0 ? null : encodeReplies(replies) };
}

function unrefTimer(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

export class Session implements EventSink, V1Connection {
  readonly id = `v1-${++connectionCount}`;
  private state: State = 'handshake';
  /** The secret the connection signed in with, checked again at every message (a JWT may expire, a token be revoked). */
  private secret: string | null = null;
  /** Its hashSecret, computed once: the check at every message looks the hash up. */
  private secretHash: string | null = null;
  private signedIn: Principal | null = null;
  private closeListeners: (() => void)[] = [];
  private readonly inbox: Inbound[] = [];
  private pumping: Promise<void> | null = null;
  private paused = false;
  /** Shutting down: no new message is taken. */
  private stopping = false;
  /** Messages started (a sequence number), and the last whose reply was sent. */
  private startedSeq = 0;
  private repliedSeq = 0;
  /** The turns of the replies not sent yet, oldest first (each resolves once its reply is written). */
  private readonly unsent: { turn: Promise<void>; chars: number }[] = [];
  private unsentChars = 0;
  /** The turn of the last reply: the next one follows it. */
  private replies: Promise<void> = Promise.resolve();
  /**
   * Events and pushes that arrive while a reply is not sent wait here, with the last message
   * started then: the reply of a message precedes the events and pushes it causes.
   */
  private held: Held[] = [];
  private droppedSinceNotice = 0;
  private droppedTotal = 0;
  private overSince: number | null = null;
  private slowTimer: NodeJS.Timeout | null = null;
  private handshakeTimer: NodeJS.Timeout | null;
  private idleTimer: NodeJS.Timeout | null = null;
  private recheckTimer: NodeJS.Timeout | null = null;
  private readonly done: Promise<void>;
  private markDone: () => void = () => undefined;

  constructor(
    private readonly deps: SessionDeps,
    private readonly wire: Wire,
    private readonly onClosed: (session: Session) => void,
  ) {
    this.done = new Promise((resolve) => {
      this.markDone = resolve;
    });
    const ms = deps.limits.handshakeTimeoutMs;
    this.handshakeTimer = unrefTimer(ms, () => this.failHandshake(`no "Bearer <token>" message within ${ms} ms`));
  }

  /** Events and pushed messages dropped on this connection because its send buffer was full. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Which socket carries the connection (V1Connection). */
  get transport(): SocketTransport | undefined {
    return this.wire.transport;
  }

  /** The principal the connection signed in with (V1Connection); only asked once signed in. */
  get principal(): Principal {
    if (this.signedIn === null) throw new Error('the connection has not signed in');
    return this.signedIn;
  }

  /**
   * Queues messages to be written as one frame after every reply already due, never in the
   * same write as a reply (compat 5.4); dropped, and counted, while the send buffer is full.
   */
  push(messages: readonly object[]): void {
    if (this.state !== 'open' || messages.length === 0) return;
    const traced = this.deps.tracing?.push(this.transport, messages.length);
    const text = encodePush(messages);
    let outcome: PushOutcome = 'held';
    if (this.repliedSeq === this.startedSeq) outcome = this.writePush(text, messages.length);
    else this.held.push({ seq: this.startedSeq, push: text, count: messages.length });
    traced?.(outcome);
  }

  /** Hivekit subscription pushes: their v1 messages, as one push. */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void {
    if (this.state === 'open') this.push(subscriptionMessages(updates));
  }

  onClose(listener: () => void): void {
    if (this.state === 'closing' || this.state === 'closed') {
      queueMicrotask(listener);
      return;
    }
    this.closeListeners.push(listener);
  }

  /** A message arrived (text of one WebSocket message or TCP line). */
  receive(text: string): void {
    this.enqueue({ kind: 'text', text });
  }

  /** A message arrived that is not valid UTF-8. */
  receiveUndecodable(): void {
    this.enqueue({ kind: 'undecodable' });
  }

  /**
   * The stream broke (e.g. a line over the size limit): the messages before it are
   * answered, then the connection fails with this error.
   */
  receiveFatal(error: LocusError): void {
    this.enqueue({ kind: 'fatal', error });
  }

  /** The peer sent its last message (TCP half-close): answer what came, then close. */
  receiveEnd(): void {
    this.enqueue({ kind: 'end' });
  }

  /** Any sign of life from the peer (a WebSocket pong) keeps the connection from idling out. */
  touch(): void {
    this.idleTimer?.refresh();
  }

  /** Fails the connection: an error frame (`{res:"err",err,erc}`), then close (e.g. a line over the size limit). */
  abort(err: LocusError): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.wire.send(encodeFrameError(err));
    this.closeWith(closeCodeOf(err), err.code);
  }

  /** The transport reports that the connection is gone, whatever the cause. */
  closed(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.stop();
    this.markDone();
    this.onClosed(this);
  }

  /**
   * Server shutdown: reads no further message, lets the ones under way finish (their
   * writes are committed and answered), then tells the client (`unavailable`) and closes:
   * WebSocket code 1001 (going away), TCP an orderly end.
   */
  async shutdown(): Promise<void> {
    if (this.state === 'closed') return;
    this.stopping = true;
    this.inbox.length = 0;
    if (this.pumping !== null) await this.pumping;
    await this.replies;
    if (!this.ending()) {
      this.wire.send(encodeFrameError(new LocusError('unavailable', 'the server is shutting down; reconnect shortly')));
      this.closeWith(goingAway, 'server shutting down');
    }
    await this.done;
  }

  deliver(_realm: string, events: readonly SubscriptionEvent[]): void {
    if (this.state !== 'open') return;
    const traced = this.deps.tracing?.push(this.transport, events.length);
    let outcome: PushOutcome = 'held';
    if (this.repliedSeq === this.startedSeq) outcome = this.writeEvents(events);
    else this.held.push({ seq: this.startedSeq, events });
    traced?.(outcome);
  }

  realmDeleted(realm: string, ids: readonly string[]): void {
    if (this.state !== 'open') return;
    const message = `realm ${JSON.stringify(splitRealmKey(realm).name)} was deleted; subscriptions ${ids.join(', ')} ended`;
    this.wire.send(encodeFrameError(new LocusError('not_found', message)));
  }

  private enqueue(item: Inbound): void {
    if (this.stopping || (this.state !== 'handshake' && this.state !== 'open')) return;
    this.touch();
    this.inbox.push(item);
    if (this.inbox.length >= maxInbox && !this.paused) {
      this.paused = true;
      this.wire.pause();
    }
    this.kick();
  }

  /** Starts answering the inbox unless that is under way. */
  private kick(): void {
    if (this.pumping !== null) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.inbox.length > 0) this.kick();
    });
  }

  private async pump(): Promise<void> {
    try {
      for (let item = this.inbox.shift(); item !== undefined; item = this.inbox.shift()) {
        if (item.kind === 'text' && this.state === 'open') {
          // Other connections get their turn while this one waits for its oldest reply (a
          // commit away): a connection starts at most maxPipelined messages, and about
          // pipelineChars of them, in one turn.
          const chars = this.deps.limits.pipelineChars;
          while (this.unsent.length >= maxPipelined || (this.unsent.length > 0 && this.unsentChars + item.text.length > chars)) {
            await this.unsent[0]?.turn;
          }
          if (this.state !== 'open') return;
          await this.pipeline(item.text, ++this.startedSeq);
        } else {
          // Anything else follows the replies to the messages before it.
          await this.replies;
          if (item.kind === 'end') this.closeWith(1000, 'end of input');
          else if (this.state === 'handshake') await this.handshake(item);
          else if (this.state === 'open') this.answer(item);
          else return;
        }
        if (this.wire.bufferedBytes() > this.deps.limits.sendBufferBytes) await this.writable();
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'v1 connection failed');
      this.abort(toLocusError(err));
    }
    if (this.paused && this.state === 'open') {
      this.paused = false;
      this.wire.resume();
    }
  }

  /**
   * A frame before sign-in: `Bearer <token>` signs in; anything else, or a token that does not
   * hold, is answered with a `sys`/`aut` error and the connection stays open for another
   * `Bearer` frame (compat 1.2.6, 12.10) until the handshake timeout.
   */
  private async handshake(item: Inbound): Promise<void> {
    if (item.kind === 'fatal') {
      this.abort(item.error);
      return;
    }
    const secret = item.kind === 'text' ? bearerSecret(item.text.trim()) : null;
    if (secret === null) {
      this.refuseSignIn(new LocusError('unauthorized', 'the first message must be "Bearer <token>"'), false);
      return;
    }
    let principal: Principal;
    try {
      principal = await this.deps.access.authenticate(secret, this.wire.remoteAddress);
    } catch (err) {
      this.refuseSignIn(toLocusError(err), true);
      return;
    }
    if (this.state !== 'handshake') return;
    this.state = 'open';
    this.secret = secret;
    this.secretHash = hashSecret(secret);
    this.signedIn = principal;
    this.clearHandshakeTimer();
    const idleMs = this.deps.limits.idleTimeoutMs;
    if (idleMs > 0) {
      const seconds = idleMs / 1000;
      this.idleTimer = unrefTimer(idleMs, () =>
        this.abort(new LocusError('timeout', `nothing received for ${seconds} s; send sys/pin to keep a quiet connection open`)),
      );
    }
    this.scheduleRecheck();
    this.wire.send(encodeAuthSuccess(this.deps.build));
    this.deps.presence?.connectionOpened(this);
  }

  /**
   * The next check of a quiet connection's token, at a random point of the second half
   * of `tokenRecheckMs` and the first half of the next: connections opened together (a
   * fleet reconnecting after a restart) do not all check at the same moment.
   */
  private scheduleRecheck(): void {
    const ms = this.deps.limits.tokenRecheckMs * (0.5 + Math.random());
    this.recheckTimer = unrefTimer(ms, () => {
      if (this.state !== 'open') return;
      // A message under way checks the token itself.
      if (this.pumping === null && this.repliedSeq === this.startedSeq) void this.recheck();
      this.scheduleRecheck();
    });
  }

  /** A failed sign-in: the `sys`/`aut` error; the connection stays open. */
  private refuseSignIn(err: LocusError, tokenGiven: boolean): void {
    if (this.state !== 'handshake') return;
    const error = err.code === 'internal' ? new LocusError('unavailable', 'sign-in could not be checked; try again') : err;
    this.observeSignInRefused(error, tokenGiven);
    this.deps.logger.info({ remoteAddress: this.wire.remoteAddress, reason: error.message }, 'v1 authentication failed');
    this.wire.send(encodeAuthFailure(error));
  }

  /** The handshake timeout: the `sys`/`aut` error, then close. */
  private failHandshake(message: string): void {
    if (this.state !== 'handshake') return;
    this.deps.logger.info({ remoteAddress: this.wire.remoteAddress, reason: message }, 'v1 authentication failed');
    const error = new LocusError('unauthorized', message);
    this.observeSignInRefused(error, false);
    this.wire.send(encodeAuthFailure(error));
    this.closeWith(closeCodeOf(error), 'unauthorized');
  }

  private observeSignInRefused(error: LocusError, tokenGiven: boolean): void {
    const transport = this.wire.transport;
    if (transport !== undefined) this.deps.observer?.signInRefused(transport, error, tokenGiven);
  }

  /** A message that is not text: the end of a broken stream, or one that is not UTF-8. */
  private answer(item: Inbound): void {
    if (item.kind === 'fatal') this.abort(item.error);
    else if (item.kind === 'undecodable') this.wire.send(encodeFrameError(invalid('the message is not valid UTF-8', 'invalid_json')));
  }

  /**
   * Starts message `seq` (the token checked, the frame parsed, its actions begun after the
   * reply to the message before: Dispatcher.start) and queues its reply to follow that one;
   * resolves once its actions have begun. Without a promise in between when the token's
   * check is answered from memory (SessionDeps.heldPrincipal), as it is but once a second.
   */
  private pipeline(text: string, seq: number): Promise<void> {
    const earlier = this.replies;
    const principal = this.currentPrincipal();
    if (principal instanceof Promise) return principal.then((found) => this.begin(found, text, seq, earlier));
    return this.begin(principal, text, seq, earlier);
  }

  /** pipeline's part once the token is checked: `earlier` is the reply to the message before. */
  private begin(principal: Principal | LocusError, text: string, seq: number, earlier: Promise<void>): Promise<void> {
    if (principal instanceof LocusError) return this.queueReply(seq, text.length, Promise.resolve(this.refusal(principal)));
    const parsed = parseFrame(text, this.deps.limits.maxActions);
    if (!parsed.ok) return this.queueReply(seq, text.length, Promise.resolve({ text: encodeFrameError(parsed.error) }));
    this.signedIn = principal;
    const run = this.deps.dispatcher.start(parsed.items, { principal, connection: this, sink: this }, earlier);
    void this.queueReply(seq, text.length, run.replies.then(replyFrame));
    return run.started;
  }

  /**
   * Queues the reply of message `seq` to be written once the replies before it are (at once
   * when none waits); its turn settles once it is written. Returns a settled promise: a
   * message answered without running (refused, unparsable) has begun once its reply is queued.
   */
  private queueReply(seq: number, chars: number, reply: Promise<Reply>): Promise<void> {
    const after = this.unsent.length === 0 ? reply : this.replies.then(() => reply);
    const turn = after
      .then(
        (outcome) => this.replied(seq, outcome),
        (err: unknown) => this.replied(seq, { abort: this.failure(err) }),
      )
      .catch((err: unknown) => this.abort(this.failure(err)));
    this.replies = turn;
    this.unsent.push({ turn, chars });
    this.unsentChars += chars;
    return settled;
  }

  /** A message's turn: its reply goes out, then the events held for it. */
  private replied(seq: number, reply: Reply): void {
    this.unsentChars -= this.unsent.shift()?.chars ?? 0;
    this.repliedSeq = seq;
    if ('abort' in reply) this.abort(reply.abort);
    else if (this.state === 'open' && reply.text !== null) this.wire.send(reply.text);
    // What was held for this reply, in the order it came: runs of events together, each push its own frame.
    let events: SubscriptionEvent[] = [];
    while (this.held.length > 0 && (this.held[0]?.seq ?? Infinity) <= seq) {
      const item = this.held.shift() as Held;
      if (this.state !== 'open') continue;
      if ('events' in item) {
        events.push(...item.events);
        continue;
      }
      if (events.length > 0) this.writeEvents(events);
      events = [];
      this.writePush(item.push, item.count);
    }
    if (events.length > 0 && this.state === 'open') this.writeEvents(events);
  }

  private failure(err: unknown): LocusError {
    this.deps.logger.error({ err }, 'v1 connection failed');
    return toLocusError(err);
  }

  /**
   * The token again, at every message and every `tokenRecheckMs`: a revoked token (or a
   * deleted realm) ends the connection, so it stops receiving events too. A promise only
   * when memory does not decide it (SessionDeps.heldPrincipal).
   */
  private currentPrincipal(): Principal | LocusError | Promise<Principal | LocusError> {
    if (this.secret === null || this.secretHash === null) return new LocusError('unauthorized', 'the connection has no token');
    const held = this.deps.heldPrincipal?.(this.secretHash);
    if (held !== undefined) return held;
    return this.deps.access.authenticate(this.secret, null, this.secretHash).catch(toLocusError);
  }

  /** What a message gets when its token does not hold: the end of the connection, or (the check failed) an error. */
  private refusal(error: LocusError): Reply {
    if (error.code === 'unauthorized') return { abort: new LocusError('unauthorized', 'the token is no longer valid (revoked, or its realm was deleted)') };
    return { text: encodeFrameError(error) };
  }

  /** The periodic check of a quiet connection's token. */
  private async recheck(): Promise<void> {
    const principal = await this.currentPrincipal();
    if (!(principal instanceof LocusError) || this.state !== 'open') return;
    const reply = this.refusal(principal);
    if ('abort' in reply) this.abort(reply.abort);
    else if (reply.text !== null) this.wire.send(reply.text);
  }

  private writeEvents(events: readonly SubscriptionEvent[]): PushOutcome {
    const limit = this.deps.limits.sendBufferBytes;
    if (this.wire.bufferedBytes() > limit) {
      this.drop(events.length);
      return 'dropped';
    }
    this.overSince = null;
    this.noticeDrops();
    for (const text of encodeEventMessages(events)) this.wire.send(text);
    return 'written';
  }

  private writePush(text: string, count: number): PushOutcome {
    if (this.wire.bufferedBytes() > this.deps.limits.sendBufferBytes) {
      this.drop(count);
      return 'dropped';
    }
    this.overSince = null;
    this.noticeDrops();
    this.wire.send(text);
    return 'written';
  }

  private drop(count: number): void {
    this.droppedSinceNotice += count;
    this.droppedTotal += count;
    if (this.wire.transport !== undefined) this.deps.observer?.dropped(this.wire.transport, count);
    if (this.overSince !== null) return;
    this.overSince = Date.now();
    this.slowTimer = unrefTimer(this.deps.limits.slowConsumerMs, () => {
      this.slowTimer = null;
      if (this.state !== 'open') return;
      if (this.overSince !== null && this.wire.bufferedBytes() > this.deps.limits.sendBufferBytes) {
        this.deps.logger.warn({ dropped: this.droppedTotal }, 'closing a v1 connection that reads events too slowly');
        this.abort(new LocusError('slow_consumer', `events were not read fast enough; ${this.droppedSinceNotice} were dropped`));
        return;
      }
      this.overSince = null;
      this.noticeDrops();
    });
  }

  private noticeDrops(): void {
    if (this.droppedSinceNotice === 0) return;
    const n = this.droppedSinceNotice;
    this.droppedSinceNotice = 0;
    this.wire.send(
      encodeFrameError(new LocusError('slow_consumer', `${n} event${n === 1 ? ' was' : 's were'} dropped: the connection read too slowly`)),
    );
  }

  /** Waits while the send buffer is over its limit; a peer that never drains it is closed. */
  private async writable(): Promise<void> {
    const { sendBufferBytes, slowConsumerMs } = this.deps.limits;
    if (this.wire.bufferedBytes() <= sendBufferBytes) return;
    const deadline = Date.now() + slowConsumerMs;
    while (this.state === 'open' && this.wire.bufferedBytes() > sendBufferBytes) {
      if (Date.now() >= deadline) {
        this.abort(new LocusError('slow_consumer', 'replies were not read fast enough'));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, drainPollMs));
    }
  }

  /** Closing or closed (a method: the state changes across awaits, which narrowing does not see). */
  private ending(): boolean {
    return this.state === 'closing' || this.state === 'closed';
  }

  private closeWith(code: number, reason: string): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    this.stop();
    this.wire.close(code, reason);
  }

  private stop(): void {
    this.inbox.length = 0;
    this.clearHandshakeTimer();
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.slowTimer !== null) clearTimeout(this.slowTimer);
    if (this.recheckTimer !== null) clearTimeout(this.recheckTimer);
    this.recheckTimer = null;
    this.idleTimer = null;
    this.slowTimer = null;
    this.deps.subscriptions.remove(this);
    this.held = [];
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        this.deps.logger.error({ err }, 'a v1 connection close listener failed');
      }
    }
  }

  private clearHandshakeTimer(): void {
    if (this.handshakeTimer !== null) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
  }
}
