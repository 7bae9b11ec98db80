/**
 * The event bus port: how geofence and change events travel from the process that
 * stored a write to every process that serves subscribers. The in-process adapter
 * (`local-bus.ts`) serves embedded mode; a NATS adapter (cluster mode) maps each realm
 * to its own subjects, `locus.<realm>.evt.<kind>`, so that a subscriber only ever
 * receives its own realm's events and NATS permissions can be set per realm.
 *
 * Events are plain JSON data: they cross process boundaries unchanged.
 */
import type { Area, RealmData, TrackedObject } from '../domain/types.js';
import type { ObjectView } from '../service/views.js';

/** An object's current location changed; `object` is the object as a read returns it. */
export interface LocationEvent {
  kind: 'loc';
  realm: string;
  object: ObjectView;
}

/** An object entered or left an area (`time`: the time of the fix that did it). */
export interface AreaCrossingEvent {
  kind: 'ent' | 'exi';
  realm: string;
  object: string;
  area: string;
  time: string;
}

export interface ObjectDeletedEvent {
  kind: 'del';
  realm: string;
  object: string;
}

export interface AreaDeletedEvent {
  kind: 'del';
  realm: string;
  area: string;
}

/**
 * Any write of an object (create, update, set, bulk entry): the object as stored after it.
 * Feeds Hivekit subscriptions (membership is decided where they live, from this record).
 */
export interface ObjectWrittenEvent {
  kind: 'obj';
  realm: string;
  object: TrackedObject;
}

/** An area was created or changed: the area as stored after it. */
export interface AreaWrittenEvent {
  kind: 'are';
  realm: string;
  area: Area;
}

/** A presence change (compat section 6): the object's connectionStatus is now `status`. */
export interface PresenceEvent {
  kind: 'cst';
  realm: string;
  object: string;
  status: 'con' | 'dis';
}

/**
 * A realm pub/sub message (compat 4.8): published under the id `idp` (literal), delivered to
 * every connection subscription of the realm whose pattern matches it and whose event is `eve`.
 */
export interface PublishedEvent {
  kind: 'pub';
  realm: string;
  eve: string;
  idp: string;
  dat: unknown;
}

/** What subscribers receive. */
export type LocusEvent =
  | LocationEvent
  | AreaCrossingEvent
  | ObjectDeletedEvent
  | AreaDeletedEvent
  | ObjectWrittenEvent
  | AreaWrittenEvent
  | PresenceEvent
  | PublishedEvent;

/**
 * A realm was created, updated (label or data) or deleted: published on its tenant's subject
 * (`locus.tenant.<tenant>.realm`), for realm-event and realm-data subscriptions (compat 5.2).
 * `realm` is the storage key (types.ts Realm.id), `name` the id the tenant knows.
 */
export interface RealmChangedEvent {
  kind: 'rea';
  act: 'cre' | 'upd' | 'del';
  tenant: string;
  realm: string;
  name: string;
  /** The realm after the change (null after a delete). */
  record: { label: string | null; data: RealmData } | null;
}

export type EventKind = LocusEvent['kind'];

/**
 * Everything published on a realm's subjects: its events, and the notice that the realm
 * was deleted (`locus.<realm>.sys.deleted`), which ends its subscriptions everywhere.
 */
export type RealmMessage = { kind: 'events'; events: readonly LocusEvent[] } | { kind: 'realm_deleted' };

/**
 * A control message: a change that other processes' caches must hear of, published on
 * `locus.ctl.<kind>`. Every process receives every control message (they are rare), its
 * own included, and drops what the message names; the next lookup reads the store again.
 */
export type ControlMessage =
  /** A realm was created, changed (settings, label, data) or deleted: drop it from realm caches. */
  | { kind: 'realm.changed'; realm: string }
  /** A token was revoked (or its realm deleted): drop every cached sign-in for that token hash, or (`hash` null) every cached sign-in of the realm. */
  | { kind: 'token.revoked'; realm: string; hash: string | null }
  /** A tenant's signing keys changed (created, rotated, revoked) or the tenant was deleted. */
  | { kind: 'keys.changed'; tenant: string }
  /** A realm's areas changed (created, updated, deleted): geofence indexes of the realm are rebuilt on next use. */
  | { kind: 'areas.changed'; realm: string };

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
}

export interface BusSubscription {
  unsubscribe(): void;
}

export interface EventBus {
  /**
   * Publishes a realm's events, in order. Never blocks the caller: delivery is
   * asynchronous, so a write's reply is written before the events it causes.
   */
  publish(realm: string, events: readonly LocusEvent[]): void;
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
