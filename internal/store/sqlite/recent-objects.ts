/**
 * The committed state of recently updated objects, so that the next write of the same
 * object reads no row: a tracker reports every few seconds, and reading and decoding its
 * row was about a fifth of the cost of a location update. (New objects are not held: see
 * the object store's write path.)
 *
 * Holds, per (realm, id), the row as written (its JSON texts, which a write reuses when a
 * part is unchanged) and the object decoded from it. Entries are set only after a
 * commit, so a rolled-back write leaves the cache as the file is. Objects are immutable
 * once built (applyPatch and mergeData always make new ones), so one object may be both
 * a change's `new` and the next change's `old`. Bounded: the least recently written
 * entries go first. Like the spatial index, it is dropped when another connection
 * commits to the file (`PRAGMA data_version`), and a realm's entries go with the realm,
 * and with each retention pass over it (which changes rows: past fixes, loc_pruned).
 */
import type { TrackedObject } from '../../domain/types.js';
import type { ObjectStateRow } from './rows.js';

export interface RecentObject {
  row: ObjectStateRow;
  obj: TrackedObject;
}

/** Objects held at most (0.5–1 KiB each: with up to seven past fixes held in the row, see history-rows.ts). */
export const RECENT_OBJECTS = 65_536;

export class RecentObjects {
  /** Realm → id → entry; a realm's map in write order (oldest first). */
  private readonly realms = new Map<string, Map<string, RecentObject>>();
  private size = 0;

  constructor(private readonly max = RECENT_OBJECTS) {}

  get(realm: string, id: string): RecentObject | undefined {
    return this.realms.get(realm)?.get(id);
  }

  /** After a commit: the object's state as written. */
  set(realm: string, id: string, entry: RecentObject): void {
    let objects = this.realms.get(realm);
    if (objects === undefined) {
      objects = new Map();
      this.realms.set(realm, objects);
    }
    // Deleted first, so that the entry moves to the end (most recent).
    if (objects.delete(id)) this.size--;
    objects.set(id, entry);
    this.size++;
    if (this.size > this.max) this.evict();
  }

  delete(realm: string, id: string): void {
    if (this.realms.get(realm)?.delete(id) === true) this.size--;
  }

  forget(realm: string): void {
    const objects = this.realms.get(realm);
    if (objects === undefined) return;
    this.size -= objects.size;
    this.realms.delete(realm);
  }

  clear(): void {
    this.realms.clear();
    this.size = 0;
  }

  get count(): number {
    return this.size;
  }

  /** Drops a quarter of the entries, the oldest of each realm in proportion. */
  private evict(): void {
    const target = Math.floor((this.max * 3) / 4);
    const before = this.size;
    const excess = before - target;
    for (const [realm, objects] of this.realms) {
      let drop = Math.ceil((objects.size * excess) / before);
      for (const id of objects.keys()) {
        if (drop-- <= 0) break;
        objects.delete(id);
        this.size--;
      }
      if (objects.size === 0) this.realms.delete(realm);
      if (this.size <= target) break;
    }
  }
}
