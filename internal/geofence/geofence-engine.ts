/**
 * Turns change records into events: the services call it after every stored write
 * (it is their ChangeListener), it keeps one AreaIndex per realm current and publishes
 * `loc`, `exi`, `ent` and `del` on the event bus (the `evt` model), plus the Hivekit kinds:
 * `obj` for every object write (the object as stored after it) and `are` for every area
 * create or update (the area as stored after it), which feed Hivekit subscriptions
 * (service/live). An object write costs one extra small event object; nothing is copied.
 *
 * Containment is computed from the change record alone: the areas holding the old
 * current location against those holding the new one. Nothing is re-read and no
 * per-object membership is kept, so reshaping or creating an area raises no event by
 * itself, and an older fix (which leaves the current location as it was) raises none.
 *
 * A realm's areas are loaded on its first change. Until the load completes, that realm's
 * changes wait in a queue, in order; the index is then rewound to the moment loading
 * began (every area touched meanwhile starts from the `old` side of its first queued
 * change) and the queue is replayed, so each change meets the areas as they were when
 * it was written.
 *
 * The index is told when to go, not guessed: a control message `areas.changed` (or
 * `realm.changed`: the realm may have been deleted and made again) from any process drops the
 * realm's index, and the next change loads it again; a load under way starts over. When the
 * bus may have lost such messages (a reconnect after an outage), every realm's index goes.
 */
import type { Area, AreaChange, Location, ObjectChange } from '../domain/types.js';
import type { ControlMessage, LocusEvent } from '../domain/events.js';
import type { EventBus } from '../events/port.js';
import type { ChangeListener } from '../service/changes.js';
import { noPresence, type PresenceLookup } from '../service/presence-port.js';
import type { AreaStore } from '../store/port.js';
import { AreaIndex } from './area-index.js';

type Pending = { kind: 'objects'; changes: readonly ObjectChange[] } | { kind: 'area'; change: AreaChange };

interface Loading {
  status: 'loading';
  pending: Pending[];
}

type RealmState = { status: 'ready'; index: AreaIndex } | Loading;

const loadPageSize = 1000;

/** True when both are absent or both describe the same fix. */
export function sameLocation(a: Location | null, b: Location | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  return (
    a.longitude === b.longitude &&
    a.latitude === b.latitude &&
    a.time === b.time &&
    a.altitude === b.altitude &&
    a.speed === b.speed &&
    a.heading === b.heading &&
    a.accuracy === b.accuracy &&
    a.altitudeAccuracy === b.altitudeAccuracy
  );
}

/** The events of one object change, in the order subscribers get them: loc, exits, enters. */
export function eventsOf(change: ObjectChange, index: AreaIndex, presence: PresenceLookup = noPresence): LocusEvent[] {
  const { realm } = change;
  if (change.new === null) return change.old === null ? [] : [{ kind: 'del', realm, object: change.id }];
  const before = change.old?.location ?? null;
  const after = change.new.location;
  if (after === null || sameLocation(before, after)) return [];
  const obj = change.new;
  // connectionStatus is presence's (compat 6): a fix alone does not make the object `con`.
  // The object as stored: the wire view is built where the event goes to the wire.
  const events: LocusEvent[] = [{ kind: 'loc', realm, object: obj, connectionStatus: presence.statusOf(realm, obj.id) }];
  const wasIn = before === null ? noAreas : index.containing(before.longitude, before.latitude);
  const isIn = index.containing(after.longitude, after.latitude);
  // Both lists are in id order: exits are the areas of wasIn missing from isIn, enters
  // the reverse, each found by one walk of the two lists (no sets: a location update
  // allocates what its events need and little else).
  pushCrossings(events, 'exi', wasIn, isIn, realm, obj.id, after.time);
  pushCrossings(events, 'ent', isIn, wasIn, realm, obj.id, after.time);
  return events;
}

const noAreas: readonly string[] = [];

/** Adds a `kind` event for each area of `from` that `other` lacks; both sorted (code unit order). */
function pushCrossings(
  events: LocusEvent[],
  kind: 'ent' | 'exi',
  from: readonly string[],
  other: readonly string[],
  realm: string,
  object: string,
  time: string,
): void {
  let j = 0;
  for (const area of from) {
    while (j < other.length && (other[j] as string) < area) j++;
    if (j < other.length && other[j] === area) j++;
    else events.push({ kind, realm, object, area, time });
  }
}

export class GeofenceEngine implements ChangeListener {
  private readonly realms = new Map<string, RealmState>();

  constructor(
    private readonly areas: Pick<AreaStore, 'list'>,
    private readonly bus: EventBus,
    private readonly onError: (err: unknown, realm: string) => void = () => undefined,
    /** Where the connectionStatus of `loc` events comes from. */
    private readonly presence: PresenceLookup = noPresence,
  ) {}

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    this.submit(realm, { kind: 'objects', changes });
  }

  areaChanged(realm: string, change: AreaChange): void {
    this.submit(realm, { kind: 'area', change });
  }

  realmDeleted(realm: string): void {
    this.realms.delete(realm);
    this.bus.publishRealmDeleted(realm);
  }

  /** A control message: drops the index of the realm whose areas (or the realm itself) changed. */
  hear(message: ControlMessage): void {
    if (message.kind !== 'areas.changed' && message.kind !== 'realm.changed') return;
    this.drop(message.realm);
  }

  /** Drops every realm's index: `areas.changed` messages may have been lost. */
  dropAll(): void {
    for (const realm of [...this.realms.keys()]) this.drop(realm);
  }

  private drop(realm: string): void {
    const state = this.realms.get(realm);
    if (state === undefined) return;
    if (state.status === 'ready') {
      this.realms.delete(realm);
      return;
    }
    // A load under way may have read the areas before the change: start it over, with the same queue.
    const restarted: Loading = { status: 'loading', pending: state.pending };
    this.realms.set(realm, restarted);
    void this.load(realm, restarted);
  }

  /** Areas indexed for a realm (null: not loaded); for tests and diagnostics. */
  indexedAreas(realm: string): number | null {
    const state = this.realms.get(realm);
    return state?.status === 'ready' ? state.index.size : null;
  }

  private submit(realm: string, work: Pending): void {
    const state = this.realms.get(realm);
    if (state === undefined) {
      const loading: Loading = { status: 'loading', pending: [work] };
      this.realms.set(realm, loading);
      void this.load(realm, loading);
    } else if (state.status === 'loading') {
      state.pending.push(work);
    } else {
      this.apply(realm, state.index, work);
    }
  }

  private apply(realm: string, index: AreaIndex, work: Pending): void {
    if (work.kind === 'area') {
      const { change } = work;
      if (change.new === null) {
        index.remove(change.id);
        this.bus.publish(realm, [{ kind: 'del', realm, area: change.id }]);
        return;
      }
      if (change.old?.shape !== change.new.shape) index.put(change.new);
      this.bus.publish(realm, [{ kind: 'are', realm, area: change.new }]);
      return;
    }
    const events: LocusEvent[] = [];
    for (const change of work.changes) {
      // `obj` first: a Hivekit subscription sees the write before the evt model's events of it.
      if (change.new !== null) events.push({ kind: 'obj', realm, object: change.new });
      const legacy = eventsOf(change, index, this.presence);
      for (let i = 0; i < legacy.length; i++) events.push(legacy[i] as LocusEvent);
    }
    if (events.length > 0) this.bus.publish(realm, events);
  }

  private async load(realm: string, state: Loading): Promise<void> {
    let index: AreaIndex;
    let loaded = true;
    try {
      index = AreaIndex.of(await this.listAll(realm));
    } catch (err) {
      this.onError(err, realm);
      // Without areas the queued changes still yield loc and del events; the next change retries.
      index = new AreaIndex();
      loaded = false;
    }
    // The realm was deleted while loading (and maybe made again): this load's work goes with it.
    if (this.realms.get(realm) !== state) return;
    rewind(index, state.pending);
    const ready: RealmState = { status: 'ready', index };
    this.realms.set(realm, ready);
    for (const work of state.pending) this.apply(realm, index, work);
    if (!loaded) this.realms.delete(realm);
  }

  private async listAll(realm: string): Promise<Area[]> {
    const all: Area[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.areas.list(realm, cursor === undefined ? { limit: loadPageSize } : { limit: loadPageSize, cursor });
      all.push(...page.items);
      cursor = page.next ?? undefined;
    } while (cursor !== undefined);
    return all;
  }
}

/** Sets every area that queued changes touch back to its state before the first of them. */
function rewind(index: AreaIndex, pending: readonly Pending[]): void {
  const seen = new Set<string>();
  for (const work of pending) {
    if (work.kind !== 'area' || seen.has(work.change.id)) continue;
    seen.add(work.change.id);
    const before = work.change.old;
    if (before === null) index.remove(work.change.id);
    else index.put(before);
  }
}
