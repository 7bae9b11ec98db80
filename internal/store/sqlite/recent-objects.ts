/**
 * The committed state of recently updated objects, so that the next write of the same
 * object reads no row: a tracker reports every few seconds, and reading and decoding its
 * row was about a fifth of the cost of a location update. (New objects are not held: see
 * the object store's write path.)
 *
 * Holds, per (realm, id), what a write needs of the row as written (its rowid, held past
 * fixes, loc_pruned: rows.ts HeldRow) and the object decoded from it. Entries are set only after a
 * commit, so a rolled-back write leaves the cache as the file is. Objects are immutable
 * once built (applyPatch and mergeData always make new ones), so one object may be both
 * a change's `new` and the next change's `old`. Bounded: the least recently written
 * entries go first (in generations, see RecentObjects). Like the spatial index, it is dropped when another connection
 * commits to the file (`PRAGMA data_version`), and a realm's entries go with the realm,
 * and with each retention pass over it (which changes rows: past fixes, loc_pruned).
 */
import type { TrackedObject } from '../../domain/types.js';
import type { HeldRow } from './rows.js';

export interface RecentObject {
  row: HeldRow;
  obj: TrackedObject;
}

/** Objects held at most (0.5–1 KiB each: with up to seven past fixes held in the row, see history-rows.ts). */
export const RECENT_OBJECTS = 65_536;

/**
 * Two generations, each realm → id → entry: writes go to the young one; once it holds
 * half the bound, it becomes the old one and the old one is dropped whole. An object
 * written within the last `max / 2` new entries is always held, and never more than `max`
 * are. A write is one map operation: keeping a strict order of last writes (a delete and
 * a re-insert per write, and a walk to evict) cost twice as much, about 0.3 µs of a
 * location update.
 */
export class RecentObjects {
  private young = new Map<string, Map<string, RecentObject>>();
  private old = new Map<string, Map<string, RecentObject>>();
  /** Entries of the young generation. */
  private youngSize = 0;

  constructor(private readonly max = RECENT_OBJECTS) {}

  get(realm: string, id: string): RecentObject | undefined {
    return this.young.get(realm)?.get(id) ?? this.old.get(realm)?.get(id);
  }

  /** After a commit: the object's state as written. */
  set(realm: string, id: string, entry: RecentObject): void {
    let objects = this.young.get(realm);
    if (objects === undefined) {
      objects = new Map();
      this.young.set(realm, objects);
    }
    const before = objects.size;
    objects.set(id, entry);
    if (objects.size > before && ++this.youngSize >= this.max / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngSize = 0;
    }
  }

  delete(realm: string, id: string): void {
    if (this.young.get(realm)?.delete(id) === true) this.youngSize--;
    this.old.get(realm)?.delete(id);
  }

  forget(realm: string): void {
    this.youngSize -= this.young.get(realm)?.size ?? 0;
    this.young.delete(realm);
    this.old.delete(realm);
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngSize = 0;
  }

  /** Objects held (a walk of the old generation: for tests and diagnostics). */
  get count(): number {
    let count = this.youngSize;
    for (const [realm, objects] of this.old) {
      const young = this.young.get(realm);
      for (const id of objects.keys()) if (young?.has(id) !== true) count++;
    }
    return count;
  }
}
