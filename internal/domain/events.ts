/**
 * The events of the domain: the change records of stored writes, what they mean to
 * subscribers (area crossings, the `evt` model's events), presence changes, realm pub/sub
 * messages and realm changes, and the control messages that tell caches of changes. Plain JSON
 * data: bus events cross process boundaries unchanged (events/port.ts carries them); the wire
 * forms are the transports' (transport/actions/codec.ts).
 */
import type { TaskChange } from './task.js';
import type { AreaChange, ConnectionStatus, ObjectChange, RealmData, TrackedObject } from './types.js';

/**
 * A stored write of an object (create, update, delete): its change record as the process that
 * stored it produced it (old, new, history, time, origin). Every listener of any process
 * derives what it needs from it: Hivekit subscriptions, the `evt` model, instructions.
 */
export interface ObjectChangedEvent {
  kind: 'object';
  realm: string;
  change: ObjectChange;
}

/** A stored write of an area (create, update, delete): its change record. */
export interface AreaChangedEvent {
  kind: 'area';
  realm: string;
  change: AreaChange;
}

/**
 * `evt` model: an object's current location changed: `object` is the object as stored after
 * the write, `connectionStatus` its presence then (compat 6). Transports build the wire view
 * from both.
 */
export interface LocationEvent {
  kind: 'location';
  realm: string;
  object: TrackedObject;
  connectionStatus: ConnectionStatus;
}

/**
 * An object entered or left an area (`time`: the time of the fix that did it): the geofence
 * engine's output, on the bus like the change records.
 */
export interface AreaCrossingEvent {
  kind: 'entered' | 'exited';
  realm: string;
  object: string;
  area: string;
  time: string;
}

/** `evt` model: an object was deleted. */
export interface ObjectDeletedEvent {
  kind: 'deleted';
  realm: string;
  object: string;
}

/** `evt` model: an area was deleted. */
export interface AreaDeletedEvent {
  kind: 'deleted';
  realm: string;
  area: string;
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

/** An instruction of the realm was created, changed or deleted (`ins` subscriptions re-read the map). */
export interface InstructionChangedEvent {
  kind: 'ins';
  realm: string;
  id: string;
  act: 'cre' | 'upd' | 'del';
}

/** A log event of the realm's instructions (hivescript.md 7), from the process that evaluates them. */
export interface InstructionLogEvent {
  kind: 'log';
  realm: string;
  entry: { id: string; lvl: 'info' | 'warn' | 'error'; tim: string; msg: string };
}

/** A task was created, changed or deleted. */
export interface TaskChangedEvent {
  kind: 'tsk';
  realm: string;
  change: TaskChange;
}

/** What travels on a realm's channel of the bus. */
export type LocusEvent =
  | ObjectChangedEvent
  | AreaChangedEvent
  | AreaCrossingEvent
  | PresenceEvent
  | PublishedEvent
  | InstructionChangedEvent
  | InstructionLogEvent
  | TaskChangedEvent;

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
 * What the `evt` model's subscriptions (service/subscriptions.ts) deliver: derived from the
 * change records and crossings where they are delivered.
 */
export type SubscriptionEvent = LocationEvent | AreaCrossingEvent | ObjectDeletedEvent | AreaDeletedEvent;

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
