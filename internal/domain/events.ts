/**
 * The events of the domain: what a stored change (or a presence change, a realm pub/sub
 * message, a realm change) means to subscribers, and the control messages that tell caches of
 * changes. Plain JSON data: they cross process boundaries unchanged (events/port.ts carries
 * them); the wire forms are the transports' (transport/actions/codec.ts).
 */
import type { TaskChange } from './task.js';
import type { Area, ConnectionStatus, RealmData, TrackedObject } from './types.js';

/**
 * An object's current location changed: `object` is the object as stored after the write,
 * `connectionStatus` its presence then (compat 6). Transports build the wire view from both.
 */
export interface LocationEvent {
  kind: 'loc';
  realm: string;
  object: TrackedObject;
  connectionStatus: ConnectionStatus;
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

/** What subscribers receive. */
export type LocusEvent =
  | LocationEvent
  | AreaCrossingEvent
  | ObjectDeletedEvent
  | AreaDeletedEvent
  | ObjectWrittenEvent
  | AreaWrittenEvent
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
