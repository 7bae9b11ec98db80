/**
 * Live subscriptions (v1 `sub`/`uns`): which connection wants which events of which
 * realm. Each realm with at least one local subscriber holds one subscription on the
 * event bus; its messages are turned into this model's events once (subscriptionEventsOf:
 * `loc` and `del` from the change records, `ent`/`exi` as the geofence engine published them)
 * and matched against each connection's filters here, so a connection gets an event once
 * however many of its subscriptions match it.
 *
 * Filters: `objects` passes events about those objects (`loc`, `ent`, `exi`, `del` of
 * an object); `areas` passes only `ent`/`exi` of those areas; given both, both must hold.
 */
import type { IdFilter } from '../auth/rights.js';
import { describe, parseIdAt, quote, isJsonObject } from '../domain/ids.js';
import { sameLocation } from '../domain/location.js';
import { invalid, LocusError, notFound } from '../errors.js';
import type { LocusEvent, SubscriptionEvent } from '../domain/events.js';
import type { BusSubscription, EventBus, RealmMessage } from '../events/port.js';
import { noPresence, type PresenceLookup } from './presence-port.js';

/** A receiver of events: one v1 connection. */
export interface EventSink {
  /** Events of one realm that match at least one of this sink's subscriptions, in order. */
  deliver(realm: string, events: readonly SubscriptionEvent[]): void;
  /** The realm was deleted; these subscriptions of the sink have ended. */
  realmDeleted(realm: string, ids: readonly string[]): void;
}

export interface SubscriptionFilter {
  objects: ReadonlySet<string> | null;
  areas: ReadonlySet<string> | null;
  /**
   * The ids the subscriber may read (auth/rights.ts readFilter; `per` R): an event naming an
   * object or area outside it does not pass. Null or absent: every id.
   */
  readable?: IdFilter | null;
}

/** True when every object and area the event names passes `readable`. */
function readableEvent(readable: IdFilter, event: SubscriptionEvent): boolean {
  switch (event.kind) {
    case 'location':
      return readable(event.object.id);
    case 'entered':
    case 'exited':
      return readable(event.object) && readable(event.area);
    case 'deleted':
      return readable('object' in event ? event.object : event.area);
  }
}

/**
 * This model's events of a realm's bus message, in order: an object change that moved the
 * current location gives `loc` (with the object's presence now, compat 6), an object or area
 * deletion `del`, crossings pass as they are; the rest (writes that left the location, the
 * Hivekit kinds) gives nothing.
 */
export function subscriptionEventsOf(events: readonly LocusEvent[], presence: PresenceLookup): SubscriptionEvent[] {
  const out: SubscriptionEvent[] = [];
  for (const event of events) {
    switch (event.kind) {
      case 'object': {
        const { change } = event;
        const after = change.new;
        if (after === null) {
          if (change.old !== null) out.push({ kind: 'deleted', realm: event.realm, object: change.id });
        } else if (after.location !== null && !sameLocation(change.old?.location ?? null, after.location)) {
          // The object as stored: the wire view is built where the event goes to the wire.
          out.push({ kind: 'location', realm: event.realm, object: after, connectionStatus: presence.statusOf(event.realm, after.id) });
        }
        break;
      }
      case 'area':
        if (event.change.new === null && event.change.old !== null) out.push({ kind: 'deleted', realm: event.realm, area: event.change.id });
        break;
      case 'entered':
      case 'exited':
        out.push(event);
        break;
      default:
        break;
    }
  }
  return out;
}

/** Most subscriptions one connection may hold. */
export const maxSubscriptionsPerSink = 100;

interface RealmSubscribers {
  bus: BusSubscription;
  sinks: Map<EventSink, Map<string, SubscriptionFilter>>;
}

function idList(value: unknown, key: string): ReadonlySet<string> | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(`dat.${key} must be a non-empty array of ids; leave it out for every ${key.slice(0, -1)} (got ${describe(value)})`);
  }
  return new Set(value.map((id, i) => parseIdAt(id, `dat.${key}[${i}]`)));
}

/** Parses the payload of `sub`: `{objects?: [ids], areas?: [ids]}`. */
export function parseSubscriptionFilter(dat: Record<string, unknown>): SubscriptionFilter {
  if (!isJsonObject(dat)) throw invalid('dat must be a JSON object');
  for (const key of Object.keys(dat)) {
    if (key !== 'objects' && key !== 'areas') throw invalid(`unknown key ${quote(key)} in dat; allowed: objects, areas`);
  }
  return { objects: idList(dat.objects, 'objects'), areas: idList(dat.areas, 'areas') };
}

export function filterPasses(filter: SubscriptionFilter, event: SubscriptionEvent): boolean {
  const readable = filter.readable ?? null;
  if (readable !== null && !readableEvent(readable, event)) return false;
  if (filter.areas !== null) {
    if (event.kind !== 'entered' && event.kind !== 'exited') return false;
    if (!filter.areas.has(event.area)) return false;
  }
  if (filter.objects !== null) {
    const object =
      event.kind === 'location' ? event.object.id : event.kind === 'entered' || event.kind === 'exited' || (event.kind === 'deleted' && 'object' in event) ? event.object : null;
    if (object === null || !filter.objects.has(object)) return false;
  }
  return true;
}

export class Subscriptions {
  private readonly realms = new Map<string, RealmSubscribers>();
  private nextId = 1;

  constructor(
    private readonly bus: EventBus,
    /** Where the connectionStatus of `loc` events comes from. */
    private readonly presence: PresenceLookup = noPresence,
  ) {}

  /** Adds a subscription and returns its id. */
  subscribe(sink: EventSink, realm: string, filter: SubscriptionFilter): string {
    if (this.countOf(sink) >= maxSubscriptionsPerSink) {
      throw new LocusError('too_large', `a connection may hold at most ${maxSubscriptionsPerSink} subscriptions`);
    }
    let subscribers = this.realms.get(realm);
    if (subscribers === undefined) {
      const created: RealmSubscribers = { bus: { unsubscribe: () => undefined }, sinks: new Map() };
      created.bus = this.bus.subscribe(realm, (message) => this.receive(realm, created, message));
      this.realms.set(realm, created);
      subscribers = created;
    }
    let own = subscribers.sinks.get(sink);
    if (own === undefined) {
      own = new Map();
      subscribers.sinks.set(sink, own);
    }
    const id = `sub_${this.nextId++}`;
    own.set(id, filter);
    return id;
  }

  /** Ends one subscription of the sink in the realm, or all of them (no id); returns the ids ended. */
  unsubscribe(sink: EventSink, realm: string, id?: string): string[] {
    const subscribers = this.realms.get(realm);
    const own = subscribers?.sinks.get(sink);
    if (id !== undefined && own?.has(id) !== true) throw notFound(`subscription ${quote(id)} not found in this realm`);
    if (subscribers === undefined || own === undefined) return [];
    const ended = id === undefined ? [...own.keys()] : [id];
    for (const key of ended) own.delete(key);
    if (own.size === 0) subscribers.sinks.delete(sink);
    if (subscribers.sinks.size === 0) this.dropRealm(realm, subscribers);
    return ended;
  }

  /** The sink went away: ends all of its subscriptions. */
  remove(sink: EventSink): void {
    for (const [realm, subscribers] of [...this.realms]) {
      if (!subscribers.sinks.delete(sink)) continue;
      if (subscribers.sinks.size === 0) this.dropRealm(realm, subscribers);
    }
  }

  /** Subscriptions held in all realms (for tests and diagnostics). */
  count(): number {
    let n = 0;
    for (const subscribers of this.realms.values()) for (const own of subscribers.sinks.values()) n += own.size;
    return n;
  }

  private countOf(sink: EventSink): number {
    let n = 0;
    for (const subscribers of this.realms.values()) n += subscribers.sinks.get(sink)?.size ?? 0;
    return n;
  }

  private dropRealm(realm: string, subscribers: RealmSubscribers): void {
    subscribers.bus.unsubscribe();
    if (this.realms.get(realm) === subscribers) this.realms.delete(realm);
  }

  private receive(realm: string, subscribers: RealmSubscribers, message: RealmMessage): void {
    if (message.kind === 'realm_deleted') {
      this.dropRealm(realm, subscribers);
      for (const [sink, own] of subscribers.sinks) sink.realmDeleted(realm, [...own.keys()]);
      return;
    }
    const events = subscriptionEventsOf(message.events, this.presence);
    if (events.length === 0) return;
    for (const [sink, own] of subscribers.sinks) {
      const matched = matching(events, own);
      if (matched.length > 0) sink.deliver(realm, matched);
    }
  }
}

function matching(events: readonly SubscriptionEvent[], filters: ReadonlyMap<string, SubscriptionFilter>): readonly SubscriptionEvent[] {
  // A subscription without filters takes the whole list: the same array for every such sink (codec.ts encodes it once).
  for (const filter of filters.values()) {
    if (filter.objects === null && filter.areas === null && (filter.readable ?? null) === null) return events;
  }
  return events.filter((event) => {
    for (const filter of filters.values()) if (filterPasses(filter, event)) return true;
    return false;
  });
}
