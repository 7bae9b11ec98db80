/**
 * One v1 connection (WebSocket or TCP), whatever carries it: the handshake, the answer
 * to each message in arrival order, pushed events, timeouts and flow control. The
 * transport only frames: it hands in each message's text and provides a Wire.
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
import type { LocusEvent } from '../../events/port.js';
import type { Access } from '../../service/access.js';
import type { EventSink, Subscriptions } from '../../service/subscriptions.js';
import {
  encodeAuthFailure,
  encodeAuthSuccess,
  encodeEvent,
  encodeMessageError,
  encodeResults,
  parseMessage,
} from './codec.js';
import type { Dispatcher } from './dispatcher.js';

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
}

export interface SessionLimits {
  handshakeTimeoutMs: number;
  /** 0: never. */
  idleTimeoutMs: number;
  sendBufferBytes: number;
  slowConsumerMs: number;
  /** How often a quiet connection re-checks its token, so that a revoked one stops receiving events. */
  tokenRecheckMs: number;
}

export interface SessionDeps {
  access: Access;
  dispatcher: Dispatcher;
  subscriptions: Subscriptions;
  build: BuildInfo;
  limits: SessionLimits;
  logger: Logger;
}

type Inbound =
  | { kind: 'text'; text: string }
  | { kind: 'undecodable' }
  | { kind: 'fatal'; error: LocusError }
  | { kind: 'end' };

type State = 'handshake' | 'open' | 'closing' | 'closed';

/** Messages read ahead of the one being answered before the session stops reading. */
const maxInbox = 16;
/** Events sent together are cut into messages of about this many characters. */
const eventMessageChars = 64 * 1024;
/** How often a session waiting for its send buffer to drain looks again. */
const drainPollMs = 5;

function unrefTimer(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

export class Session implements EventSink {
  private state: State = 'handshake';
  /** The token's hash (hashSecret), checked again at every message; the secret itself is not kept. */
  private tokenHash: string | null = null;
  private readonly inbox: Inbound[] = [];
  private pumping: Promise<void> | null = null;
  private paused = false;
  /** Shutting down: no new message is taken. */
  private stopping = false;
  /** Events that arrive while a message is being answered wait here: a reply precedes the events it causes. */
  private held: LocusEvent[] | null = null;
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

  /** Events dropped on this connection because its send buffer was full. */
  get dropped(): number {
    return this.droppedTotal;
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

  /** Fails the connection: a `sys`/`err` message, then close (e.g. a line over the size limit). */
  abort(err: LocusError): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.wire.send(encodeMessageError(err));
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

  /** Server shutdown: lets the message being answered finish, then closes with `unavailable`. */
  async shutdown(): Promise<void> {
    if (this.state === 'closed') return;
    this.stopping = true;
    this.inbox.length = 0;
    if (this.pumping !== null) await this.pumping;
    this.abort(new LocusError('unavailable', 'the server is shutting down'));
    await this.done;
  }

  deliver(_realm: string, events: readonly LocusEvent[]): void {
    if (this.state !== 'open') return;
    if (this.held === null) this.writeEvents(events);
    else for (const event of events) this.held.push(event);
  }

  realmDeleted(realm: string, ids: readonly string[]): void {
    if (this.state !== 'open') return;
    const message = `realm ${JSON.stringify(realm)} was deleted; subscriptions ${ids.join(', ')} ended`;
    this.wire.send(encodeMessageError(new LocusError('not_found', message)));
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
        if (item.kind === 'end') this.closeWith(1000, 'end of input');
        else if (this.state === 'handshake') await this.handshake(item);
        else if (this.state === 'open') await this.answer(item);
        else return;
        await this.writable();
        // The next message waits for a turn of the event loop: the events of this one go
        // out to their subscribers first (the bus delivers them there), and other
        // connections get their turn, however many messages this client has sent ahead.
        if (this.inbox.length > 0) await new Promise((resolve) => setImmediate(resolve));
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

  private async handshake(item: Inbound): Promise<void> {
    const secret = item.kind === 'text' ? bearerSecret(item.text) : null;
    if (secret === null) {
      this.failHandshake('the first message must be "Bearer <token>"');
      return;
    }
    const hash = hashSecret(secret);
    try {
      await this.deps.access.principalOf(hash);
    } catch (err) {
      this.failHandshake(toLocusError(err).message);
      return;
    }
    if (this.state !== 'handshake') return;
    this.state = 'open';
    this.tokenHash = hash;
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
      if (this.pumping === null) void this.principal();
      this.scheduleRecheck();
    });
  }

  private failHandshake(message: string): void {
    if (this.state !== 'handshake') return;
    this.wire.send(encodeAuthFailure(message));
    this.closeWith(closeCodeOf(new LocusError('unauthorized', message)), 'unauthorized');
  }

  private async answer(item: Inbound): Promise<void> {
    if (item.kind === 'end') return;
    if (item.kind === 'fatal') {
      this.abort(item.error);
      return;
    }
    if (item.kind === 'undecodable') {
      this.wire.send(encodeMessageError(invalid('the message is not valid UTF-8', 'invalid_json')));
      return;
    }
    const principal = await this.principal();
    if (principal === null) return;
    const parsed = parseMessage(item.text);
    if (!parsed.ok) {
      this.wire.send(encodeMessageError(parsed.error));
      return;
    }
    this.held = [];
    try {
      const results = await this.deps.dispatcher.dispatch(parsed.actions, { principal, sink: this });
      if (this.state === 'open') this.wire.send(encodeResults(results));
    } finally {
      const held = this.held;
      this.held = null;
      if (held.length > 0) this.deliver('', held);
    }
  }

  /**
   * The token again, at every message and every `tokenRecheckMs`: a revoked token (or a
   * deleted realm) ends the connection, so it stops receiving events too.
   */
  private async principal(): Promise<Principal | null> {
    try {
      if (this.tokenHash === null) throw new LocusError('unauthorized', 'the connection has no token');
      return await this.deps.access.principalOf(this.tokenHash);
    } catch (err) {
      const error = toLocusError(err);
      if (error.code === 'unauthorized') this.abort(new LocusError('unauthorized', 'the token is no longer valid (revoked, or its realm was deleted)'));
      else this.wire.send(encodeMessageError(error));
      return null;
    }
  }

  private writeEvents(events: readonly LocusEvent[]): void {
    const limit = this.deps.limits.sendBufferBytes;
    if (this.wire.bufferedBytes() > limit) {
      this.drop(events.length);
      return;
    }
    this.overSince = null;
    this.noticeDrops();
    let text = '';
    for (const event of events) {
      const part = encodeEvent(event);
      if (text.length > 0 && text.length + part.length > eventMessageChars) {
        this.wire.send(text + ']');
        text = '';
      }
      text += (text.length === 0 ? '[' : ',') + part;
    }
    if (text.length > 0) this.wire.send(text + ']');
  }

  private drop(count: number): void {
    this.droppedSinceNotice += count;
    this.droppedTotal += count;
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
      encodeMessageError(new LocusError('slow_consumer', `${n} event${n === 1 ? ' was' : 's were'} dropped: the connection read too slowly`)),
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
  }

  private clearHandshakeTimer(): void {
    if (this.handshakeTimer !== null) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
  }
}
