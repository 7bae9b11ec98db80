/**
 * The in-process event bus (`LOCUS_BUS=local`): embedded mode, one process. Publishing
 * only appends to a queue; the queue is delivered on the next turn of the event loop,
 * in publish order, so a writer never waits for subscribers and its reply goes out first.
 * A publish that joins an earlier one still queued (EventPublishOptions: a write's crossings
 * after its change records) is appended to that one's message.
 */
import type { BusTracing } from './bus-tracing.js';
import type {
  BusHealth,
  BusSubscription,
  ControlMessage,
  EventBus,
  EventPublishOptions,
  LocusEvent,
  PresenceMessage,
  RealmChangedEvent,
  RealmMessage,
} from './port.js';

/** A realm's messages, or (on a tenant's channel) a realm change. */
type ChannelMessage =
  | RealmMessage
  | { kind: 'tenant'; event: RealmChangedEvent }
  | { kind: 'control'; message: ControlMessage };
type Handler = (message: ChannelMessage) => void;

/** Realm keys never hold control characters, so a tenant's channel cannot collide with a realm's. */
const tenantChannel = (tenant: string): string => `\u0000tenant:${tenant}`;
const controlChannel = '\u0000control';

/**
 * A message waiting for the next turn. `trace`: the trace context captured at publish
 * (undefined while tracing is off); `at`: when a realm's events were published (epochMs()),
 * while delivery is timed, else 0.
 */
interface Queued {
  realm: string;
  message: ChannelMessage;
  trace: unknown;
  at: number;
}

/** Events that other publishes may join: the message's array, copied once the first joins (the publisher's is never changed). */
interface Joinable {
  entry: Queued;
  owned: LocusEvent[] | null;
}

/** Milliseconds since the epoch, below a millisecond: comparable between the processes of one host. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface LocalBusOptions {
  /** Carries trace context from publish to delivery; absent while tracing is off. */
  tracing?: BusTracing;
  /** Metrics: each realm's events delivered here, with the seconds since they were published. */
  onDelivered?: (lagSeconds: number) => void;
}

export class LocalEventBus implements EventBus {
  private readonly handlers = new Map<string, Set<Handler>>();
  private queue: Queued[] = [];
  /** The queued publishes named by `as`, until the queue is delivered. */
  private joinable = new Map<object, Joinable>();
  private scheduled: NodeJS.Immediate | null = null;
  private idle: (() => void) | null = null;

  /**
   * `onError` hears of a handler that threw; the other handlers still get the message.
   * `tracing` (only when tracing is on) carries each message's trace context to its delivery;
   * `onDelivered` (metrics), when given, hears of each realm's events delivered here: the
   * seconds since they were published.
   */
  constructor(
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly options: LocalBusOptions = {},
  ) {}

  publish(realm: string, events: readonly LocusEvent[], options?: EventPublishOptions): void {
    if (events.length === 0) return;
    const target = options?.join === undefined ? undefined : this.joinable.get(options.join);
    if (target !== undefined && target.entry.realm === realm && target.entry.message.kind === 'events') {
      if (target.owned === null) {
        target.owned = [...target.entry.message.events];
        target.entry.message = { kind: 'events', events: target.owned };
      }
      for (const event of events) target.owned.push(event);
      return;
    }
    const entry = this.enqueue(realm, { kind: 'events', events }, this.options.onDelivered === undefined ? 0 : epochMs());
    if (entry !== null && options?.as !== undefined) this.joinable.set(options.as, { entry, owned: null });
  }

  /** Events published elsewhere at `publishedAt` (epochMs(); 0: unknown), delivered here (the NATS bus). */
  deliver(realm: string, events: readonly LocusEvent[], publishedAt: number): void {
    if (events.length > 0) this.enqueue(realm, { kind: 'events', events }, publishedAt);
  }

  publishRealmDeleted(realm: string): void {
    this.enqueue(realm, { kind: 'realm_deleted' });
  }

  subscribe(realm: string, handler: (message: RealmMessage) => void): BusSubscription {
    return this.listen(realm, (message) => {
      if (message.kind === 'events' || message.kind === 'realm_deleted') handler(message);
    });
  }

  publishTenant(tenant: string, event: RealmChangedEvent): void {
    this.enqueue(tenantChannel(tenant), { kind: 'tenant', event });
  }

  subscribeTenant(tenant: string, handler: (event: RealmChangedEvent) => void): BusSubscription {
    return this.listen(tenantChannel(tenant), (message) => {
      if (message.kind === 'tenant') handler(message.event);
    });
  }

  publishControl(message: ControlMessage): void {
    this.enqueue(controlChannel, { kind: 'control', message });
  }

  subscribeControl(handler: (message: ControlMessage) => void): BusSubscription {
    return this.listen(controlChannel, (message) => {
      if (message.kind === 'control') handler(message.message);
    });
  }

  /** One process: local delivery is all delivery. */
  publishLocal(realm: string, events: readonly LocusEvent[]): void {
    this.publish(realm, events);
  }

  /** One process: there is nobody to share presence claims with. */
  publishPresence(_message: PresenceMessage): void {
    // Nothing to do: no other process.
  }

  subscribePresence(_handler: (message: PresenceMessage) => void): BusSubscription {
    return { unsubscribe: () => undefined };
  }

  /** One process, nothing lost: never called. */
  onResync(_listener: () => void): BusSubscription {
    return { unsubscribe: () => undefined };
  }

  health(): BusHealth {
    return { ok: true, detail: 'local' };
  }

  private listen(channel: string, handler: Handler): BusSubscription {
    let set = this.handlers.get(channel);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    return {
      unsubscribe: () => {
        const current = this.handlers.get(channel);
        if (current === undefined) return;
        current.delete(handler);
        if (current.size === 0) this.handlers.delete(channel);
      },
    };
  }

  close(): Promise<void> {
    if (this.scheduled === null) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle = resolve;
    });
  }

  /** The entry queued; null when nobody here listens to the realm. */
  private enqueue(realm: string, message: ChannelMessage, at = 0): Queued | null {
    // Nobody listens to this realm here: nothing to deliver (a NATS adapter would still publish).
    if (!this.handlers.has(realm)) return null;
    const entry: Queued = { realm, message, trace: this.options.tracing?.capture(), at };
    this.queue.push(entry);
    this.scheduled ??= setImmediate(() => this.drain());
    return entry;
  }

  private drain(): void {
    const batch = this.queue;
    this.queue = [];
    if (this.joinable.size > 0) this.joinable = new Map();
    this.scheduled = null;
    const { tracing, onDelivered } = this.options;
    // One clock reading for the batch: it is delivered in this turn, within microseconds.
    const deliveredAt = onDelivered === undefined ? 0 : epochMs();
    for (const { realm, message, trace, at } of batch) {
      const set = this.handlers.get(realm);
      if (set === undefined) continue;
      if (at > 0 && onDelivered !== undefined) onDelivered(Math.max(0, deliveredAt - at) / 1000);
      if (tracing === undefined) this.handle(set, message);
      else tracing.deliver(trace, message.kind, () => this.handle(set, message));
    }
    if (this.scheduled === null && this.idle !== null) {
      const resolve = this.idle;
      this.idle = null;
      resolve();
    }
  }

  private handle(set: ReadonlySet<Handler>, message: ChannelMessage): void {
    for (const handler of [...set]) {
      try {
        handler(message);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
