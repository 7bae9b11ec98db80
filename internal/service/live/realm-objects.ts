/**
 * Object subscriptions of one realm (hivekit-compat.md 5.5, 12.1): each keeps the set of
 * object ids that currently match it, and every object write, deletion and presence change of
 * the realm is evaluated only against the subscriptions that can concern it — never a rescan:
 *
 * - whole-realm subscriptions are candidates for every write, except those with
 *   an equality condition (`type="car"`, `$id="x"`), which are found by the value the write's
 *   object has for that field;
 * - shape and target subscriptions sit in an R-tree (rbush) under the boxes of their shape
 *   (internal/geo shapeBounds), so a write finds those around its new location;
 * - plus, for the last two, those that hold the object now (a reverse index: id →
 *   subscriptions), to see it leave;
 * - membership decides with internal/geo containsPoint (compiled) and domain/filter.ts
 *   matchesFilter, exactly as the store's list with `shape` and `filter`, so a set loaded
 *   from the store and a set kept from events agree.
 *
 * Entered → `cre`, stayed and changed → `upd`, left (moved out, filter fails, deleted) →
 * `del`. A subscription's set is loaded from the store (ObjectStore.list with its shape and
 * filter, all pages) when it is created or updated, and for a target subscription whenever
 * its target moves (the circle follows the target's current location; the candidates of the
 * new circle come from the store, so the realm's positions are not kept in memory). While a
 * load runs, the subscription queues the realm's events and replays them on the loaded set.
 * After a bus outage (resync) every set is loaded again, a target's location read again, and
 * the differences from what the client holds are pushed as `cre`/`upd`/`del`.
 *
 * A subscriber whose token's `per` does not let it read every id (`readable`) never has the
 * others in its set: they are neither loaded nor admitted by events, so no push names them.
 */
import RBush from 'rbush';
import type { IdFilter } from '../../auth/rights.js';
import type { ConnectionStatus, FilterCondition, ScalarValue, Shape, TrackedObject } from '../../domain/types.js';
import type { ObjectOptions } from '../../domain/subscription.js';
import { isNested, sameDataValue } from '../../domain/data.js';
import { fieldValue, matchesFilter } from '../../domain/filter.js';
import { sameTasks } from '../../domain/object.js';
import { compileShape, shapeBounds, type PointTest } from '../../geo/contains.js';
import { sameLocation } from '../../domain/location.js';
import type { ObjectStore } from '../../store/port.js';
import type { PresenceLookup } from '../presence-port.js';
import type { ConnectionLive, LiveSubscription } from './connection-live.js';
import type { SubscriptionUpdate } from './push-port.js';

const pageSize = 10_000;

interface TreeEntry {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  sub: ObjectSubscription;
}

/** Whole-realm subscriptions with an equality condition on one field, by the value they want. */
interface KeyedGroup {
  name: string;
  field: string;
  target: 'data' | undefined;
  byValue: Map<ScalarValue, Set<ObjectSubscription>>;
}

/** The first `field = value` condition (value not null): only objects with that value can match. */
function equalityOf(conditions: readonly FilterCondition[]): FilterCondition | null {
  for (const condition of conditions) if (condition.op === '=' && condition.value !== null) return condition;
  return null;
}

type Queued = { kind: 'obj'; object: TrackedObject } | { kind: 'del'; id: string } | { kind: 'cst'; id: string };

/** What a load does with the set it finds: nothing visible, a `ful` push, or `cre`/`del` diffs. */
export type LoadMode = 'silent' | 'full' | 'diff';

function sameData(a: TrackedObject['data'], b: TrackedObject['data']): boolean {
  if (a === b) return true;
  let n = 0;
  for (const key in a) {
    if (!sameDataValue(a[key], b[key])) return false;
    n++;
  }
  for (const key in b) if (Object.hasOwn(b, key)) n--;
  return n === 0;
}

/** True when a write left the object as it was (no `upd` for it). */
export function sameObject(a: TrackedObject, b: TrackedObject): boolean {
  return a === b || (a.label === b.label && sameLocation(a.location, b.location) && sameData(a.data, b.data) && sameTasks(a.tasks, b.tasks));
}

/** The realm a subscription's pushes are of, and where its objects' presence comes from. */
export interface RenderContext {
  realm: string;
  presence: PresenceLookup;
}

const none: readonly TrackedObject[] = [];

export class ObjectSubscription implements LiveSubscription {
  /** Objects matching now, as last seen (what the client holds once the cycle is pushed). */
  members = new Map<string, TrackedObject>();
  /** Ids changed this cycle → the record the client held at the cycle's start (null: none). */
  private readonly touched = new Map<string, TrackedObject | null>();
  /** Ids whose connection status changed this cycle. */
  private statusChanged: Set<string> | null = null;
  private full = false;

  options: ObjectOptions;
  /** The exact point test of the scope; null for the whole realm. */
  test: PointTest | null = null;
  /** The shape to query and index; null: whole realm; 'none': a target without location. */
  shape: Shape | null | 'none' = null;
  /** Target subscriptions: the target's current location. */
  center: { lon: number; lat: number } | null = null;

  loading = false;
  /** Counts loads: a load overtaken by a later one (an `upd` during a load) drops its result. */
  generation = 0;
  /** A load to run once the one under way is done: `diff`, or `relocate` (a target's location read again first). */
  reloadAgain: 'no' | 'diff' | 'relocate' = 'no';
  queue: Queued[] = [];
  stamp = 0;
  /** Where index() put it: its boxes in the tree, the set it joined, whether memberOf lists it. */
  entries: TreeEntry[] = [];
  indexedIn: Set<ObjectSubscription> | null = null;
  keyed: { group: KeyedGroup; value: ScalarValue } | null = null;
  tracking = false;
  closed = false;

  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly realm: RealmObjects,
    options: ObjectOptions,
    /** The ids the subscriber may read (auth/rights.ts readFilter); null: every id. Others never join the set. */
    readonly readable: IdFilter | null = null,
  ) {
    this.options = options;
    this.compile();
  }

  get spatial(): boolean {
    return this.options.scope.kind !== 'realm';
  }

  get target(): string | null {
    return this.options.scope.kind === 'target' ? this.options.scope.target : null;
  }

  /** Sets shape and test from the options (and, for a target, its center). */
  compile(): void {
    const scope = this.options.scope;
    if (scope.kind === 'realm') {
      this.shape = null;
      this.test = null;
    } else if (scope.kind === 'target') {
      this.shape = this.center === null ? 'none' : { cx: this.center.lon, cy: this.center.lat, r: scope.radius };
      this.test = this.shape === 'none' ? null : compileShape(this.shape);
    } else {
      this.shape = scope.shape;
      this.test = compileShape(scope.shape);
    }
  }

  inScope(o: TrackedObject): boolean {
    if (this.readable !== null && !this.readable(o.id)) return false;
    if (this.shape !== null) {
      if (this.shape === 'none' || o.location === null || this.test === null) return false;
      if (!this.test(o.location.longitude, o.location.latitude)) return false;
    }
    const conditions: readonly FilterCondition[] = this.options.conditions;
    return conditions.length === 0 || matchesFilter(o, conditions);
  }

  /** Notes that `id` changed this cycle; `before` is what the client held (first change of the cycle counts). */
  touch(id: string, before: TrackedObject | null): void {
    if (this.closed) return;
    if (!this.touched.has(id)) this.touched.set(id, before);
    this.conn.schedule(this);
  }

  touchStatus(id: string): void {
    (this.statusChanged ??= new Set()).add(id);
    this.conn.schedule(this);
  }

  /** The next cycle pushes the whole current set (`uty:"ful"`). */
  pushFull(): void {
    this.full = true;
    this.conn.schedule(this);
  }

  drain(out: SubscriptionUpdate[]): void {
    const { statusOf } = this.realm;
    if (this.full) {
      this.full = false;
      this.touched.clear();
      this.statusChanged = null;
      out.push({ kind: 'objects', subscription: this.id, full: true, created: [...this.members.values()], updated: none, deleted: none, statusOf });
      return;
    }
    const created: TrackedObject[] = [];
    const updated: TrackedObject[] = [];
    const deleted: TrackedObject[] = [];
    for (const [id, before] of this.touched) {
      const now = this.members.get(id);
      if (now !== undefined) {
        if (before === null) created.push(now);
        else if (now !== before) updated.push(now);
      } else if (before !== null) {
        deleted.push(before);
      }
    }
    if (this.statusChanged !== null) {
      for (const id of this.statusChanged) {
        const now = this.members.get(id);
        if (now !== undefined && !this.touched.has(id)) updated.push(now);
      }
      this.statusChanged = null;
    }
    this.touched.clear();
    if (created.length + updated.length + deleted.length === 0) return;
    out.push({ kind: 'objects', subscription: this.id, full: false, created, updated, deleted, statusOf });
  }

  detach(): void {
    this.closed = true;
    this.conn.unschedule(this);
    this.realm.remove(this);
  }
}

export class RealmObjects {
  /** An object's presence now (compat 6), for the pushes that show it. */
  readonly statusOf = (id: string): ConnectionStatus => this.render.presence.statusOf(this.render.realm, id);

  private readonly all = new Set<ObjectSubscription>();
  private readonly global = new Set<ObjectSubscription>();
  private readonly loadingSubs = new Set<ObjectSubscription>();
  private readonly tree = new RBush<TreeEntry>();
  /** Whole-realm subscriptions with an equality condition, by field. */
  private readonly keyed = new Map<string, KeyedGroup>();
  /** Spatial and keyed subscriptions holding an object: id → subscriptions. */
  private readonly memberOf = new Map<string, Set<ObjectSubscription>>();
  /** Target subscriptions by their target's id. */
  private readonly targets = new Map<string, Set<ObjectSubscription>>();
  private treeSize = 0;
  private seq = 0;

  constructor(
    readonly render: RenderContext,
    private readonly store: Pick<ObjectStore, 'list' | 'get'>,
    private readonly onError: (err: unknown) => void,
  ) {}

  get size(): number {
    return this.all.size;
  }

  /**
   * Adds a subscription and loads its set from the store (a target's location first).
   * `full`: push the set on the next cycle (`exe`); else start from it silently (12.1).
   */
  async add(sub: ObjectSubscription, full: boolean): Promise<void> {
    this.all.add(sub);
    this.addTarget(sub);
    await this.load(sub, full ? 'full' : 'silent', true);
  }

  /** New options (sub `upd`): reload the set and push it whole (5.6). */
  async reconfigure(sub: ObjectSubscription, options: ObjectOptions): Promise<void> {
    this.unindex(sub);
    this.removeTarget(sub);
    sub.options = options;
    sub.center = null;
    this.addTarget(sub);
    await this.load(sub, 'full', true);
  }

  remove(sub: ObjectSubscription): void {
    this.unindex(sub);
    this.removeTarget(sub);
    this.loadingSubs.delete(sub);
    this.all.delete(sub);
    sub.members = new Map();
  }

  /** Every subscription of the realm (for a realm deletion). */
  subscriptions(): ObjectSubscription[] {
    return [...this.all];
  }

  /**
   * Events may have been lost (a bus outage): loads the subscription's set again (a target's
   * location first) and pushes the differences from what the client holds. A load under way
   * may have read before: this one runs after it.
   */
  async resync(sub: ObjectSubscription): Promise<void> {
    if (sub.closed) return;
    if (sub.loading) {
      sub.reloadAgain = 'relocate';
      return;
    }
    await this.load(sub, 'diff', true);
  }

  // --- events -------------------------------------------------------------------------

  written(o: TrackedObject): void {
    const targeted = this.targets.get(o.id);
    if (targeted !== undefined) for (const sub of targeted) this.moveTarget(sub, o);
    if (this.loadingSubs.size > 0) for (const sub of this.loadingSubs) sub.queue.push({ kind: 'obj', object: o });
    const seq = ++this.seq;
    for (const sub of this.global) this.evaluate(sub, o);
    if (this.keyed.size > 0) {
      for (const group of this.keyed.values()) {
        const value = fieldValue(o, group.field, group.target);
        // A nested value equals no condition's value (domain/filter.ts).
        if (value === undefined || isNested(value)) continue;
        const subs = group.byValue.get(value);
        if (subs === undefined) continue;
        for (const sub of subs) {
          sub.stamp = seq;
          this.evaluate(sub, o);
        }
      }
    }
    const l = o.location;
    if (l !== null && this.treeSize > 0) {
      const found = this.tree.search({ minX: l.longitude, minY: l.latitude, maxX: l.longitude, maxY: l.latitude });
      for (const { sub } of found) {
        if (sub.stamp === seq) continue;
        sub.stamp = seq;
        this.evaluate(sub, o);
      }
    }
    const holders = this.memberOf.get(o.id);
    if (holders !== undefined) {
      // evaluate may delete the current element from the set, which iteration allows.
      for (const sub of holders) {
        if (sub.stamp === seq) continue;
        sub.stamp = seq;
        this.evaluate(sub, o);
      }
    }
  }

  deleted(id: string): void {
    const targeted = this.targets.get(id);
    if (targeted !== undefined) for (const sub of targeted) this.moveTarget(sub, null);
    if (this.loadingSubs.size > 0) for (const sub of this.loadingSubs) sub.queue.push({ kind: 'del', id });
    for (const sub of this.global) this.leave(sub, id);
    const holders = this.memberOf.get(id);
    if (holders !== undefined) for (const sub of [...holders]) this.leave(sub, id);
  }

  statusChanged(id: string): void {
    if (this.loadingSubs.size > 0) for (const sub of this.loadingSubs) sub.queue.push({ kind: 'cst', id });
    for (const sub of this.global) if (sub.members.has(id)) sub.touchStatus(id);
    const holders = this.memberOf.get(id);
    if (holders !== undefined) for (const sub of holders) sub.touchStatus(id);
  }

  // --- membership ---------------------------------------------------------------------

  private evaluate(sub: ObjectSubscription, o: TrackedObject): void {
    const had = sub.members.get(o.id);
    if (sub.inScope(o)) {
      if (had === undefined) {
        sub.members.set(o.id, o);
        if (sub.tracking) this.addMember(o.id, sub);
        sub.touch(o.id, null);
      } else if (had !== o && !sameObject(had, o)) {
        sub.members.set(o.id, o);
        sub.touch(o.id, had);
      }
    } else if (had !== undefined) {
      sub.members.delete(o.id);
      if (sub.tracking) this.removeMember(o.id, sub);
      sub.touch(o.id, had);
    }
  }

  private leave(sub: ObjectSubscription, id: string): void {
    const had = sub.members.get(id);
    if (had === undefined) return;
    sub.members.delete(id);
    if (sub.tracking) this.removeMember(id, sub);
    sub.touch(id, had);
  }

  private addMember(id: string, sub: ObjectSubscription): void {
    let set = this.memberOf.get(id);
    if (set === undefined) {
      set = new Set();
      this.memberOf.set(id, set);
    }
    set.add(sub);
  }

  private removeMember(id: string, sub: ObjectSubscription): void {
    const set = this.memberOf.get(id);
    if (set === undefined) return;
    set.delete(sub);
    if (set.size === 0) this.memberOf.delete(id);
  }

  // --- targets ------------------------------------------------------------------------

  private addTarget(sub: ObjectSubscription): void {
    const target = sub.target;
    if (target === null) return;
    let set = this.targets.get(target);
    if (set === undefined) {
      set = new Set();
      this.targets.set(target, set);
    }
    set.add(sub);
  }

  private removeTarget(sub: ObjectSubscription): void {
    const target = sub.target;
    if (target === null) return;
    const set = this.targets.get(target);
    if (set === undefined) return;
    set.delete(sub);
    if (set.size === 0) this.targets.delete(target);
  }

  /** The target was written (or deleted: null): the circle follows it; the set is reloaded. */
  private moveTarget(sub: ObjectSubscription, o: TrackedObject | null): void {
    const l = o?.location ?? null;
    const before = sub.center;
    if (l === null ? before === null : before !== null && before.lon === l.longitude && before.lat === l.latitude) return;
    sub.center = l === null ? null : { lon: l.longitude, lat: l.latitude };
    if (sub.loading) {
      if (sub.reloadAgain === 'no') sub.reloadAgain = 'diff';
      return;
    }
    this.load(sub, 'diff', false).catch(this.onError);
  }

  // --- loading ------------------------------------------------------------------------

  /**
   * Loads the subscription's set from the store. `locate`: read a target's location first.
   * Meanwhile the realm's events queue on the subscription and are replayed afterwards.
   */
  private async load(sub: ObjectSubscription, mode: LoadMode, locate: boolean): Promise<void> {
    this.unindex(sub);
    const generation = ++sub.generation;
    sub.loading = true;
    sub.queue = [];
    this.loadingSubs.add(sub);
    let found: Map<string, TrackedObject>;
    try {
      if (locate && sub.target !== null) {
        const before = sub.center;
        const target = await this.store.get(this.render.realm, sub.target);
        // A move queued meanwhile is newer than what was read: it wins when replayed.
        if (sub.center === before) sub.center = target?.location ? { lon: target.location.longitude, lat: target.location.latitude } : null;
      }
      sub.compile();
      found = await this.query(sub);
    } catch (err) {
      if (sub.generation === generation) this.finishLoad(sub);
      throw err;
    }
    // Deleted meanwhile, or a later load (started after this one's query) will decide.
    if (sub.closed || sub.generation !== generation) return;
    if (mode === 'diff') {
      for (const [id, o] of found) {
        const had = sub.members.get(id);
        if (had === undefined) {
          sub.members.set(id, o);
          sub.touch(id, null);
        } else if (!sameObject(had, o)) {
          sub.members.set(id, o);
          sub.touch(id, had);
        }
      }
      for (const [id, had] of sub.members) {
        if (!found.has(id)) {
          sub.members.delete(id);
          sub.touch(id, had);
        }
      }
    } else {
      sub.members = found;
      if (mode === 'full') sub.pushFull();
    }
    this.finishLoad(sub);
    const again = sub.reloadAgain;
    if (again !== 'no' && !sub.closed) {
      sub.reloadAgain = 'no';
      this.load(sub, 'diff', again === 'relocate').catch(this.onError);
    }
  }

  /** Replays the queued events, then indexes the subscription again. */
  private finishLoad(sub: ObjectSubscription): void {
    this.loadingSubs.delete(sub);
    sub.loading = false;
    const queue = sub.queue;
    sub.queue = [];
    if (sub.closed) return;
    sub.compile();
    this.index(sub);
    for (const event of queue) {
      if (event.kind === 'obj') this.evaluate(sub, event.object);
      else if (event.kind === 'del') this.leave(sub, event.id);
      else if (sub.members.has(event.id)) sub.touchStatus(event.id);
    }
  }

  private async query(sub: ObjectSubscription): Promise<Map<string, TrackedObject>> {
    const found = new Map<string, TrackedObject>();
    if (sub.shape === 'none') return found;
    const base = { limit: pageSize, filter: sub.options.conditions, ...(sub.shape === null ? {} : { shape: sub.shape }) };
    let cursor: string | undefined;
    do {
      const page = await this.store.list(this.render.realm, cursor === undefined ? base : { ...base, cursor });
      const { readable } = sub;
      for (const o of page.items) if (readable === null || readable(o.id)) found.set(o.id, o);
      cursor = page.next ?? undefined;
    } while (cursor !== undefined && !sub.closed);
    return found;
  }

  private index(sub: ObjectSubscription): void {
    const equality = sub.spatial ? null : equalityOf(sub.options.conditions);
    if (!sub.spatial && equality === null) {
      this.global.add(sub);
      sub.indexedIn = this.global;
      return;
    }
    sub.tracking = true;
    for (const id of sub.members.keys()) this.addMember(id, sub);
    if (equality !== null) {
      const name = `${equality.target ?? ''}:${equality.field}`;
      let group = this.keyed.get(name);
      if (group === undefined) {
        group = { name, field: equality.field, target: equality.target, byValue: new Map() };
        this.keyed.set(name, group);
      }
      let set = group.byValue.get(equality.value);
      if (set === undefined) {
        set = new Set();
        group.byValue.set(equality.value, set);
      }
      set.add(sub);
      sub.indexedIn = set;
      sub.keyed = { group, value: equality.value };
      return;
    }
    if (sub.shape !== null && sub.shape !== 'none') {
      sub.entries = shapeBounds(sub.shape).map((b) => ({ minX: b.minLon, minY: b.minLat, maxX: b.maxLon, maxY: b.maxLat, sub }));
      for (const entry of sub.entries) this.tree.insert(entry);
      this.treeSize += sub.entries.length;
    }
  }

  private unindex(sub: ObjectSubscription): void {
    sub.indexedIn?.delete(sub);
    sub.indexedIn = null;
    if (sub.keyed !== null) {
      const { group, value } = sub.keyed;
      if (group.byValue.get(value)?.size === 0) group.byValue.delete(value);
      if (group.byValue.size === 0 && this.keyed.get(group.name) === group) this.keyed.delete(group.name);
      sub.keyed = null;
    }
    for (const entry of sub.entries) this.tree.remove(entry);
    this.treeSize -= sub.entries.length;
    sub.entries = [];
    if (sub.tracking) for (const id of sub.members.keys()) this.removeMember(id, sub);
    sub.tracking = false;
  }
}
