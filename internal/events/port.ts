/**
 * The event bus port: how change records and the events derived from them (geofence
 * crossings, presence, pub/sub) travel from the process that stored a write to every process
 * that serves subscribers. The in-process adapter
 * (`local-bus.ts`) serves embedded mode; a NATS adapter (cluster mode) maps each realm
 * to its own subjects, `locus.<realm>.evt.<kind>`, so that a subscriber only ever
 * receives its own realm's events and NATS permissions can be set per realm.
 *
 * Events are plain JSON data: they cross process boundaries unchanged.
 */
import type { ControlMessage, LocusEvent, RealmChangedEvent } from '../domain/events.js';

// The event types are the domain's (domain/events.ts); re-exported for the adapters.
export type {
  AreaChangedEvent,
  AreaCrossingEvent,
  ControlMessage,
  EventKind,
  LocusEvent,
  ObjectChangedEvent,
  PresenceEvent,
  PublishedEvent,
  RealmChangedEvent,
} from '../domain/events.js';

/**
 * Everything published on a realm's subjects: its events, and the notice that the realm
 * was deleted (`locus.<realm>.sys.deleted`), which ends its subscriptions everywhere.
 */
export type RealmMessage = { kind: 'events'; events: readonly LocusEvent[] } | { kind: 'realm_deleted' };

/**
 * Presence claims shared between processes (service/presence-registry.ts), on `locus.presence`:
 * each process announces the object-id patterns its data-provider connections claim, per
 * realm (storage key), as a lease renewed every heartbeat; a process that stops renewing
 * loses its claims once `leaseMs` passes, and a clean shutdown withdraws them at once.
 */
export type PresenceMessage =
  | { kind: 'claims'; process: string; leaseMs: number; claims: Record<string, string[]> }
  | { kind: 'withdraw'; process: string }
  /** A process started: the others send their claims now rather than at their next heartbeat. */
  | { kind: 'hello'; process: string };

/** Whether the bus reaches the other processes now (readiness detail). */
export interface BusHealth {
  ok: boolean;
  detail: string;
  /** Messages dropped since the bus opened (the NATS outage buffer was full); absent: the bus drops none. */
  dropped?: number;
}

export interface BusSubscription {
  unsubscribe(): void;
}

/**
 * How a publish relates to another of the same realm: a write's change records are published
 * `as` the write's change list, and the crossings they cause, published later by another
 * listener, `join` it. While the records still wait for delivery in this process, the crossings
 * are delivered in the same message, right after them (one frame to an `evt` subscriber, as
 * when one publish carried both); else, and in other processes, they go as any publish.
 */
export interface EventPublishOptions {
  /** A key (compared by identity) that a later publish may `join`. */
  as?: object;
  /** The key of the earlier publish to deliver these events with. */
  join?: object;
}

export interface EventBus {
  /**
   * Publishes a realm's events, in order. Never blocks the caller: delivery is
   * asynchronous, so a write's reply is written before the events it causes.
   */
  publish(realm: string, events: readonly LocusEvent[], options?: EventPublishOptions): void;
  /** Tells every subscriber of the realm that it was deleted. */
  publishRealmDeleted(realm: string): void;
  /** Receives every message of one realm (`locus.<realm>.>`), in publish order. */
  subscribe(realm: string, handler: (message: RealmMessage) => void): BusSubscription;
  /** Publishes a realm change on its tenant's subject. Never blocks the caller. */
  publishTenant(tenant: string, event: RealmChangedEvent): void;
  /** Receives every realm change of one tenant, in publish order. */
  subscribeTenant(tenant: string, handler: (event: RealmChangedEvent) => void): BusSubscription;
  /** Publishes a control message to every process (this one included). Never blocks the caller. */
  publishControl(message: ControlMessage): void;
  /** Receives every control message, from every process, in publish order per publisher. */
  subscribeControl(handler: (message: ControlMessage) => void): BusSubscription;
  /**
   * Delivers events to this process's subscribers only: events every process works out for
   * itself (presence changes), which must not reach the others twice.
   */
  publishLocal(realm: string, events: readonly LocusEvent[]): void;
  /** Sends presence claims to the other processes (never this one); the local bus drops them. */
  publishPresence(message: PresenceMessage): void;
  /** Receives the other processes' presence claims. */
  subscribePresence(handler: (message: PresenceMessage) => void): BusSubscription;
  /**
   * Hears when messages meant for this process may have been lost (the bus is at most once):
   * its connection came back after an outage and its subscriptions are on the server again,
   * or another process's came back (what that one sent meanwhile may have missed this one).
   * From the moment a listener is called, every message published reaches this process
   * again, so a listener that re-reads the store then misses nothing (level-based repair).
   * The local bus never calls it: it loses nothing.
   */
  onResync(listener: () => void): BusSubscription;
  /** Whether the bus reaches the other processes now; the local bus always does. */
  health(): BusHealth;
  /** Delivers what is queued, then stops. */
  close(): Promise<void>;
}

/**
 * A realm id as one subject token: realm ids may hold `.`, `*`, `>` and spaces, which
 * NATS reserves, so everything but letters, digits, `-` and `_` is percent-encoded.
 */
export function realmToken(realm: string): string {
  return Array.from(new TextEncoder().encode(realm), (byte) => {
    const c = String.fromCharCode(byte);
    return /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

/** The subject an event is published on: `locus.<realm>.evt.<kind>`. */
export function eventSubject(event: LocusEvent): string {
  return `locus.${realmToken(event.realm)}.evt.${event.kind}`;
}
