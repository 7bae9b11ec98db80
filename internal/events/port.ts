/**
 * The event bus port: how geofence and change events travel from the process that
 * stored a write to every process that serves subscribers. The in-process adapter
 * (`local-bus.ts`) serves embedded mode; a NATS adapter (cluster mode) maps each realm
 * to its own subjects, `locus.<realm>.evt.<kind>`, so that a subscriber only ever
 * receives its own realm's events and NATS permissions can be set per realm.
 *
 * Events are plain JSON data: they cross process boundaries unchanged.
 */
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

/** What subscribers receive. */
export type LocusEvent = LocationEvent | AreaCrossingEvent | ObjectDeletedEvent | AreaDeletedEvent;

export type EventKind = LocusEvent['kind'];

/**
 * Everything published on a realm's subjects: its events, and the notice that the realm
 * was deleted (`locus.<realm>.sys.deleted`), which ends its subscriptions everywhere.
 */
export type RealmMessage = { kind: 'events'; events: readonly LocusEvent[] } | { kind: 'realm_deleted' };

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
