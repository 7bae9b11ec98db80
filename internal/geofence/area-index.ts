/**
 * One realm's areas in memory: an R-tree (rbush) over the boxes of each shape finds the
 * candidates for a point, and the exact test of internal/geo (compileShape, which decides
 * as containsPoint) settles it. A shape that
 * crosses the antimeridian has two boxes; both point at the same area.
 */
import RBush from 'rbush';
import type { Area } from '../domain/types.js';
import { compileShape, shapeBounds, type PointTest } from '../geo/contains.js';

interface Entry {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  id: string;
  /** The exact test (containsPoint's decision, compiled once per shape). */
  test: PointTest;
}

export class AreaIndex {
  private readonly tree = new RBush<Entry>();
  private readonly entries = new Map<string, Entry[]>();

  /** Builds an index of these areas at once (bulk loading makes a better tree). */
  static of(areas: readonly Area[]): AreaIndex {
    const index = new AreaIndex();
    const all: Entry[] = [];
    for (const area of areas) {
      const entries = entriesOf(area);
      index.entries.set(area.id, entries);
      all.push(...entries);
    }
    index.tree.load(all);
    return index;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Adds the area, or replaces its shape. */
  put(area: Area): void {
    this.remove(area.id);
    const entries = entriesOf(area);
    this.entries.set(area.id, entries);
    for (const entry of entries) this.tree.insert(entry);
  }

  remove(id: string): void {
    const entries = this.entries.get(id);
    if (entries === undefined) return;
    for (const entry of entries) this.tree.remove(entry);
    this.entries.delete(id);
  }

  /** Ids of the areas that contain the point, in id order. */
  containing(lon: number, lat: number): string[] {
    const candidates = this.tree.search({ minX: lon, minY: lat, maxX: lon, maxY: lat });
    if (candidates.length === 0) return [];
    const [only] = candidates;
    if (candidates.length === 1 && only !== undefined) return only.test(lon, lat) ? [only.id] : [];
    // An area that crosses the antimeridian has two boxes: its id once.
    const ids: string[] = [];
    for (const entry of candidates) if (entry.test(lon, lat)) ids.push(entry.id);
    ids.sort();
    let kept = 0;
    for (const id of ids) if (kept === 0 || ids[kept - 1] !== id) ids[kept++] = id;
    ids.length = kept;
    return ids;
  }
}

function entriesOf(area: Area): Entry[] {
  const test = compileShape(area.shape);
  return shapeBounds(area.shape).map((box) => ({
    minX: box.minLon,
    minY: box.minLat,
    maxX: box.maxLon,
    maxY: box.maxLat,
    id: area.id,
    test,
  }));
}
