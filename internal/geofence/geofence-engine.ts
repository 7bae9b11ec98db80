/**
 * Geofencing: a listener of the change stream (services call it after every stored write)
 * that keeps one AreaIndex per realm current and publishes the area crossings the object
 * changes make, `exi` and `ent`, on the event bus. Nothing else: the change records travel
 * through their own listener (service/change-publisher.ts), registered before this one; a
 * write's crossings join the publish of its records (EventPublishOptions), so that a subscriber
 * of this process gets both in one message while the records have not gone out yet (as when a
 * realm's areas load: the records go first, and the crossings follow the load).
 *
 * Containment is computed from the change record alone: the areas holding the old
 * current location against those holding the new one. Nothing is re-read and no
 * per-object membership is kept, so reshaping or creating an area raises no crossing by
 * itself, and an older fix (which leaves the current location as it was) raises none.
 *
 * A realm's areas are loaded on its first object change. Until the load completes, that
 * realm's changes wait in a queue, in order; the index is then rewound to the moment loading
 * began (every area touched meanwhile starts from the `old` side of its first queued change)
 * and the queue is replayed, so each change meets the areas as they were when it was written.
 *
 * The index is told when to go, not guessed: a control message `areas.changed` (or
 * `realm.changed`: the realm may have been deleted and made again) from any process drops the
 * realm's index, and the next change loads it again; a load under way starts over. When the
 * bus may have lost such messages (a reconnect after an outage), every realm's index goes.
 */
import type { AreaCrossingEvent, ControlMessage } from '../domain/events.js';
import { sameLocation } from '../domain/location.js';
import type { Area, AreaChange, ObjectChange } from '../domain/types.js';
import type { EventBus } from '../events/port.js';
import type { ChangeListener } from '../service/changes.js';
import type { AreaStore } from '../store/port.js';
import { AreaIndex } from './area-index.js';

type Pending = { kind: 'objects'; changes: readonly ObjectChange[] } | { kind: 'area'; change: AreaChange };

interface Loading {
  status: 'loading';
  pending: Pending[];
}

type RealmState = { status: 'ready'; index: AreaIndex } | Loading;

const loadPageSize = 1000;


/** The crossings of one object change, in the order subscribers get them: exits, then enters. */
export function crossingsOf(change: ObjectChange, index: AreaIndex, out: AreaCrossingEvent[] = []): AreaCrossingEvent[] {
  if (change.new === null) return out;
  const before = change.old?.location ?? null;
  const after = change.new.location;
  if (after === null || sameLocation(before, after)) return out;
  const wasIn = before === null ? noAreas : index.containing(before.longitude, before.latitude);
  const isIn = index.containing(after.longitude, after.latitude);
  // Both lists are in id order: exits are the areas of wasIn missing from isIn, enters
  // the reverse, each found by one walk of the two lists (no sets: a location update
  // allocates what its events need and little else).
  pushCrossings(out, 'exited', wasIn, isIn, change.realm, change.id, after.time);
  pushCrossings(out, 'entered', isIn, wasIn, change.realm, change.id, after.time);
  return out;
}

const noAreas: readonly string[] = [];

/** Adds a `kind` event for each area of `from` that `other` lacks; both sorted (code unit order). */
function pushCrossings(
  events: AreaCrossingEvent[],
  kind: 'entered' | 'exited',
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
    private readonly bus: Pick<EventBus, 'publish'>,
    private readonly onError: (err: unknown, realm: string) => void = () => undefined,
  ) {}

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    const state = this.realms.get(realm);
    if (state === undefined) {
      const loading: Loading = { status: 'loading', pending: [{ kind: 'objects', changes }] };
      this.realms.set(realm, loading);
      void this.load(realm, loading);
    } else if (state.status === 'loading') {
      state.pending.push({ kind: 'objects', changes });
    } else {
      this.publishCrossings(realm, state.index, changes);
    }
  }

  /** Keeps a held index current; a realm not held reads the change with its areas when it loads. */
  areaChanged(realm: string, change: AreaChange): void {
    const state = this.realms.get(realm);
    if (state === undefined) return;
    if (state.status === 'loading') state.pending.push({ kind: 'area', change });
    else applyArea(state.index, change);
  }

  realmDeleted(realm: string): void {
    this.realms.delete(realm);
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

  /** The crossings join the publish of their change records (ChangePublisher: `as` the same list). */
  private publishCrossings(realm: string, index: AreaIndex, changes: readonly ObjectChange[]): void {
    if (index.size === 0) return;
    const events: AreaCrossingEvent[] = [];
    for (const change of changes) crossingsOf(change, index, events);
    if (events.length > 0) this.bus.publish(realm, events, { join: changes });
  }

  private async load(realm: string, state: Loading): Promise<void> {
    let areas: Area[];
    try {
      areas = await this.listAll(realm);
    } catch (err) {
      this.onError(err, realm);
      // Without areas the queued changes cross nothing; the next change tries again.
      if (this.realms.get(realm) === state) this.realms.delete(realm);
      return;
    }
    // The realm was deleted while loading (and maybe made again): this load's work goes with it.
    if (this.realms.get(realm) !== state) return;
    const index = AreaIndex.of(areas);
    rewind(index, state.pending);
    this.realms.set(realm, { status: 'ready', index });
    for (const work of state.pending) {
      if (work.kind === 'area') applyArea(index, work.change);
      else this.publishCrossings(realm, index, work.changes);
    }
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

function applyArea(index: AreaIndex, change: AreaChange): void {
  if (change.new === null) index.remove(change.id);
  else if (change.old?.shape !== change.new.shape) index.put(change.new);
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
