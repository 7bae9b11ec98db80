/**
 * The NATS event bus (`LOCUS_BUS=nats://host:4222[,nats://other:4222]`, or `tls://…`):
 * cluster mode, several processes sharing one NATS server or cluster.
 *
 * Subjects (docs/operations.md "NATS bus"):
 *   locus.<realm>.evt.<kind>          a realm's events; one message holds a JSON array of the
 *                                     events of one kind of one publish call (kind-runs.ts:
 *                                     gathered by kind, each object's events kept in order)
 *   locus.<realm>.sys.deleted         the realm was deleted
 *   locus.tenant.<tenant>.realm       a realm of the tenant was created, changed or deleted
 *   locus.ctl.<kind>                  control messages (cache invalidation), every process
 *   locus.presence                    presence claims and leases of every process
 *   locus.resync                      a process reconnected after an outage (below)
 * `<realm>` and `<tenant>` are port.ts realmToken()s (percent-encoded, one subject token).
 *
 * Interest: a process subscribes to `locus.<realm>.>` only while it has a local handler of
 * that realm (likewise a tenant's subject); control and presence subjects always.
 *
 * Own messages: the connection uses `noEcho`, and what this process publishes is delivered
 * to its own subscribers locally, through an in-process LocalEventBus (next turn, reply
 * first), never through NATS: local subscribers get local events without a round trip and
 * while NATS is down. Remote messages are fed into the same local queue as they arrive, so
 * every handler runs with the same queue semantics; order per publisher is kept (NATS
 * keeps order per connection and subscription).
 *
 * Outages: the client reconnects forever (exponential backoff with jitter). While
 * disconnected, `publish` never throws or blocks: messages are kept in a bounded buffer
 * (`maxBufferedBytes`) and sent, in order, on reconnect; past the bound they are dropped,
 * counted and logged once per outage. Presence messages are never buffered (they are
 * state, resent every heartbeat). `health()` tells the outage (readiness detail).
 *
 * Repair (`onResync`): NATS is at most once, so a reconnect tells this process's listeners
 * to re-read what they hold from the store, once the server has its subscriptions again (a
 * ping answered after the client re-sent them): from then on every message reaches it, so a
 * read that starts then misses nothing. The others may have missed what this process sent
 * (buffered messages flushed before they were back, drops, or messages lost in the socket
 * of a server that died): after its buffer it sends `locus.resync`, and every process that
 * receives it repairs the same way.
 *
 * Tracing (only when `tracing` is given): a message sent carries the trace context of its
 * publish in its headers (W3C `traceparent`), and a realm's or tenant's message received is
 * delivered in the context it carries. Messages buffered through an outage lose it.
 */
import { connect, Events, headers, type ConnectionOptions, type Msg, type MsgHdrs, type NatsConnection, type PublishOptions, type Subscription } from 'nats';
import type { BusTracing } from './bus-tracing.js';
import { kindRuns } from './kind-runs.js';
import { epochMs, LocalEventBus } from './local-bus.js';
import { OutageBuffer } from './outage-buffer.js';
import {
  realmToken,
  type BusHealth,
  type BusSubscription,
  type ControlMessage,
  type EventBus,
  type LocusEvent,
  type EventPublishOptions,
  type PresenceMessage,
  type RealmChangedEvent,
  type RealmMessage,
} from './port.js';

/** What the bus logs (a pino logger fits). */
export interface BusLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface NatsBusOptions {
  /** Server URLs (`nats://host:port`, `tls://host:port`). */
  servers: string[];
  /** The connection name servers show (/connz). */
  name?: string;
  /** Credentials (from `nats://user:pass@host` or `nats://token@host`; openBus takes them out of the URLs). */
  user?: string;
  pass?: string;
  token?: string;
  /** Hears of a handler that threw or a message that could not be read. */
  onError?: (err: unknown) => void;
  log?: BusLog;
  /** Most bytes kept while disconnected (default 16 MiB); past it messages are dropped and counted. */
  maxBufferedBytes?: number;
  /** First reconnect delay (default 250 ms); it doubles per failed attempt, up to `maxReconnectDelayMs`. */
  reconnectDelayMs?: number;
  /** Longest reconnect delay (default 5 s); each delay is jittered to 50–100 %. */
  maxReconnectDelayMs?: number;
  /** How long close() waits for the drain before it closes anyway (default 5 s). */
  drainTimeoutMs?: number;
  /** Carries trace context in message headers; absent while tracing is off. */
  tracing?: BusTracing;
  /**
   * Metrics: hears of each realm's events delivered here, with the seconds since they were
   * published (on any process). When given, event messages carry their publish time in the
   * header `Locus-Published-At` (milliseconds since the epoch).
   */
  onDelivered?: (lagSeconds: number) => void;
}

const publishedAtHeader = 'Locus-Published-At';

const silentLog: BusLog = { info: () => undefined, warn: () => undefined };

/** Realm tokens are computed per message: keep the recent ones. */
const tokenCacheSize = 10_000;

const controlPrefix = 'locus.ctl.';
const presenceSubject = 'locus.presence';
const resyncSubject = 'locus.resync';

interface Interest {
  count: number;
  /** Null when the connection was already closed. */
  sub: Subscription | null;
}

/** Connects (throws when no server answers), then returns the bus. */
export async function openNatsBus(options: NatsBusOptions): Promise<NatsBus> {
  const base = options.reconnectDelayMs ?? 250;
  const max = options.maxReconnectDelayMs ?? 5_000;
  let attempt = 0;
  const connection: ConnectionOptions = {
    servers: options.servers,
    name: options.name ?? 'locus',
    noEcho: true,
    reconnect: true,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: false,
    pingInterval: 10_000,
    maxPingOut: 3,
    reconnectDelayHandler: () => {
      const delay = Math.min(max, base * 2 ** Math.min(attempt, 20));
      attempt++;
      return Math.round(delay * (0.5 + Math.random() / 2));
    },
    ...(options.servers.some((s) => s.startsWith('tls://')) ? { tls: {} } : {}),
    ...(options.user === undefined ? {} : { user: options.user, pass: options.pass ?? '' }),
    ...(options.token === undefined ? {} : { token: options.token }),
  };
  let nc: NatsConnection;
  try {
    nc = await connect(connection);
  } catch (err) {
    throw new Error(`cannot reach NATS at ${options.servers.join(',')}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return new NatsBus(nc, options, () => (attempt = 0));
}

export class NatsBus implements EventBus {
  private readonly local: LocalEventBus;
  private readonly log: BusLog;
  private readonly onError: (err: unknown) => void;
  private readonly realms = new Map<string, Interest>();
  private readonly tenants = new Map<string, Interest>();
  private readonly presenceHandlers = new Set<(message: PresenceMessage) => void>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly tokens = new Map<string, string>();
  /** Messages kept while disconnected, sent in order on reconnect; drops counted. */
  private readonly outage: OutageBuffer;
  private connected = true;
  private closing = false;
  private closed: Promise<void> | null = null;
  private downSince: Date | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: NatsBusOptions,
    private readonly resetBackoff: () => void,
  ) {
    this.onError = options.onError ?? (() => undefined);
    this.log = options.log ?? silentLog;
    this.local = new LocalEventBus(this.onError, {
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
      ...(options.onDelivered === undefined ? {} : { onDelivered: options.onDelivered }),
    });
    this.outage = new OutageBuffer(options.maxBufferedBytes ?? 16 * 1024 * 1024);
    nc.subscribe(`${controlPrefix}>`, { callback: (err, msg) => this.onControl(err, msg) });
    nc.subscribe(presenceSubject, { callback: (err, msg) => this.onPresence(err, msg) });
    nc.subscribe(resyncSubject, { callback: (err, msg) => this.onRemoteResync(err, msg) });
    void this.watchStatus();
  }

  // ---- publishing ----

  publish(realm: string, events: readonly LocusEvent[], options?: EventPublishOptions): void {
    if (events.length === 0) return;
    this.local.publish(realm, events, options);
    const prefix = `locus.${this.token(realm)}.evt.`;
    for (const run of kindRuns(events)) this.sendEvents(prefix + run.kind, run.events);
  }

  publishRealmDeleted(realm: string): void {
    this.local.publishRealmDeleted(realm);
    this.send(`locus.${this.token(realm)}.sys.deleted`, '');
  }

  publishTenant(tenant: string, event: RealmChangedEvent): void {
    this.local.publishTenant(tenant, event);
    this.send(`locus.tenant.${this.token(tenant)}.realm`, JSON.stringify(event));
  }

  publishControl(message: ControlMessage): void {
    this.local.publishControl(message);
    this.send(controlPrefix + message.kind, JSON.stringify(message));
  }

  /** Only to other processes, never buffered: presence is state that the next heartbeat repeats. */
  publishPresence(message: PresenceMessage): void {
    if (!this.connected || this.closing) return;
    this.send(presenceSubject, JSON.stringify(message));
  }

  publishLocal(realm: string, events: readonly LocusEvent[]): void {
    this.local.publish(realm, events);
  }

  // ---- subscribing ----

  subscribe(realm: string, handler: (message: RealmMessage) => void): BusSubscription {
    const sub = this.local.subscribe(realm, handler);
    return this.withInterest(this.realms, realm, `locus.${this.token(realm)}.>`, (msg) => this.onRealm(realm, msg), sub);
  }

  subscribeTenant(tenant: string, handler: (event: RealmChangedEvent) => void): BusSubscription {
    const sub = this.local.subscribeTenant(tenant, handler);
    return this.withInterest(this.tenants, tenant, `locus.tenant.${this.token(tenant)}.realm`, (msg) => this.onTenant(tenant, msg), sub);
  }

  subscribeControl(handler: (message: ControlMessage) => void): BusSubscription {
    return this.local.subscribeControl(handler);
  }

  subscribePresence(handler: (message: PresenceMessage) => void): BusSubscription {
    this.presenceHandlers.add(handler);
    return { unsubscribe: () => this.presenceHandlers.delete(handler) };
  }

  onResync(listener: () => void): BusSubscription {
    this.resyncListeners.add(listener);
    return { unsubscribe: () => this.resyncListeners.delete(listener) };
  }

  /** Resolves once the server has every subscription and message sent so far (tests; start-up). */
  async flush(): Promise<void> {
    if (this.connected) await this.nc.flush();
  }

  health(): BusHealth {
    const dropped = this.outage.droppedTotal;
    if (this.connected) return { ok: true, detail: `nats connected to ${this.nc.getServer()}`, dropped };
    const since = this.downSince === null ? '' : ` since ${this.downSince.toISOString()}`;
    return { ok: false, detail: `nats disconnected${since}, reconnecting; ${this.outage.droppedNow} messages dropped in this outage`, dropped };
  }

  /** Sends what is buffered and delivers what is queued, then closes the connection. */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    const timeout = this.options.drainTimeoutMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), timeout)));
    try {
      const drained = this.connected ? this.nc.drain().then(() => 'drained' as const) : Promise.resolve('down' as const);
      if ((await Promise.race([drained, expired])) !== 'drained' && !this.nc.isClosed()) await this.nc.close();
    } catch (err) {
      this.onError(err);
      if (!this.nc.isClosed()) await this.nc.close().catch(() => undefined);
    } finally {
      clearTimeout(timer);
    }
    await this.local.close();
  }

  // ---- internals ----

  private token(name: string): string {
    let token = this.tokens.get(name);
    if (token === undefined) {
      if (this.tokens.size >= tokenCacheSize) this.tokens.clear();
      token = realmToken(name);
      this.tokens.set(name, token);
    }
    return token;
  }

  private withInterest(
    table: Map<string, Interest>,
    key: string,
    subject: string,
    onMessage: (msg: Msg) => void,
    sub: BusSubscription,
  ): BusSubscription {
    let interest = table.get(key);
    if (interest === undefined) {
      interest = {
        count: 0,
        sub: this.nc.isClosed()
          ? null
          : this.nc.subscribe(subject, {
              callback: (err, msg) => {
                if (err !== null) this.onError(err);
                else if (this.options.tracing === undefined || msg.headers === undefined) onMessage(msg);
                else this.options.tracing.received((key) => msg.headers?.get(key) || undefined, () => onMessage(msg));
              },
            }),
      };
      table.set(key, interest);
    }
    interest.count++;
    let active = true;
    return {
      unsubscribe: () => {
        if (!active) return;
        active = false;
        sub.unsubscribe();
        const current = table.get(key);
        if (current === undefined || --current.count > 0) return;
        table.delete(key);
        if (!this.nc.isClosed()) current.sub?.unsubscribe();
      },
    };
  }

  /** Events of one kind: big batches are split so that every message fits the server's max payload. */
  private sendEvents(subject: string, events: readonly LocusEvent[]): void {
    const payload = JSON.stringify(events);
    const max = this.nc.info?.max_payload ?? 1024 * 1024;
    if (payload.length * 3 > max && events.length > 1 && Buffer.byteLength(payload) > max) {
      const half = Math.ceil(events.length / 2);
      this.sendEvents(subject, events.slice(0, half));
      this.sendEvents(subject, events.slice(half));
      return;
    }
    this.send(subject, payload, this.options.onDelivered === undefined ? undefined : publishedAt());
  }

  private send(subject: string, payload: string, hdrs?: MsgHdrs): void {
    if (this.connected) {
      try {
        this.nc.publish(subject, payload, this.publishOptions(hdrs));
      } catch (err) {
        // Closed, or too big for the server: never the writer's problem.
        this.drop(err);
      }
      return;
    }
    if (subject === presenceSubject) return;
    if (!this.outage.add(subject, payload) && this.outage.droppedNow === 1) this.warnDropped(null);
  }

  /** The trace context of the publish under way as message headers; none outside a span. */
  /** The headers of a message sent: `hdrs` (metrics' publish time), plus the trace context while tracing is on. */
  private publishOptions(hdrs: MsgHdrs | undefined): PublishOptions | undefined {
    let carried = hdrs;
    this.options.tracing?.inject((key, value) => (carried ??= headers()).set(key, value));
    return carried === undefined ? undefined : { headers: carried };
  }

  private drop(err: unknown): void {
    if (this.outage.countDrop() === 1) this.warnDropped(err);
  }

  private warnDropped(err: unknown): void {
    this.log.warn({ err, connected: this.connected, maxBufferedBytes: this.outage.maxBytes }, 'event bus dropped a message (logged once per outage)');
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === Events.Disconnect) {
        if (!this.connected) continue;
        this.connected = false;
        this.downSince = new Date();
        this.outage.outageBegins();
        this.log.warn({ server: status.data }, 'event bus disconnected from NATS; reconnecting');
      } else if (status.type === Events.Reconnect) {
        this.resetBackoff();
        this.connected = true;
        const buffered = this.outage.take();
        for (const [subject, payload] of buffered) this.send(subject, payload);
        this.log.info(
          { server: status.data, downMs: this.downSince === null ? 0 : Date.now() - this.downSince.getTime(), resent: buffered.length, dropped: this.outage.droppedNow, droppedTotal: this.outage.droppedTotal },
          'event bus reconnected to NATS',
        );
        this.downSince = null;
        void this.resubscribed();
      } else if (status.type === Events.Error) {
        this.log.warn({ err: status.data }, 'event bus: NATS reported an error');
      }
    }
  }

  /** After a reconnect: repair here once the server has the subscriptions, and ask the others to. */
  private async resubscribed(): Promise<void> {
    try {
      await this.nc.flush();
    } catch {
      // Down again (or closing): the next reconnect repairs.
      return;
    }
    if (this.closing || !this.connected) return;
    this.send(resyncSubject, JSON.stringify({ process: this.options.name ?? 'locus' }));
    this.log.info({}, 'event bus resubscribed after an outage; repairing from the store');
    this.resync();
  }

  private onRemoteResync(err: Error | null, msg: Msg): void {
    if (err !== null) return this.onError(err);
    const from = this.parse<{ process?: unknown }>(msg)?.process;
    this.log.info({ process: typeof from === 'string' ? from.slice(0, 256) : null }, 'event bus: another process reconnected to NATS; repairing from the store');
    this.resync();
  }

  private resync(): void {
    for (const listener of [...this.resyncListeners]) {
      try {
        listener();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private parse<T>(msg: Msg): T | null {
    try {
      return msg.json<T>();
    } catch (err) {
      this.onError(err);
      return null;
    }
  }

  private onRealm(realm: string, msg: Msg): void {
    // `locus.<realm>.evt.<kind>` or `locus.<realm>.sys.deleted`; anything else is not a realm's
    // (a realm named "tenant" or "ctl" shares its first token with those subjects).
    const parts = msg.subject.split('.');
    if (parts.length !== 4) return;
    if (parts[2] === 'evt') {
      const events = this.parse<LocusEvent[]>(msg);
      if (Array.isArray(events) && events.length > 0) this.local.deliver(realm, events, Number(msg.headers?.get(publishedAtHeader) ?? 0) || 0);
    } else if (parts[2] === 'sys' && parts[3] === 'deleted') {
      this.local.publishRealmDeleted(realm);
    }
  }

  private onTenant(tenant: string, msg: Msg): void {
    const event = this.parse<RealmChangedEvent>(msg);
    if (event !== null && event.kind === 'rea') this.local.publishTenant(tenant, event);
  }

  private onControl(err: Error | null, msg: Msg): void {
    if (err !== null) return this.onError(err);
    const message = this.parse<ControlMessage>(msg);
    if (message !== null && msg.subject === controlPrefix + message.kind) this.local.publishControl(message);
  }

  private onPresence(err: Error | null, msg: Msg): void {
    if (err !== null) return this.onError(err);
    const message = this.parse<PresenceMessage>(msg);
    if (message === null) return;
    for (const handler of [...this.presenceHandlers]) {
      try {
        handler(message);
      } catch (handlerErr) {
        this.onError(handlerErr);
      }
    }
  }
}

/** The header of an event message that names its publish time. */
function publishedAt(): MsgHdrs {
  const h = headers();
  h.set(publishedAtHeader, String(epochMs()));
  return h;
}
