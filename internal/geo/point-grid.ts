/**
 * A grid index of points in memory: numeric ids with a location each, looked up by the
 * boxes that cover a shape. Pure (no I/O): the SQLite store keeps one per realm as its
 * spatial index (store/sqlite/location-index.ts), the candidate step before the exact test.
 *
 * The grid has CELLS_PER_DEGREE² cells per square degree (2⁻⁸°: about 435 m of latitude;
 * a 1 km circle covers about 40 cells). Cells are keyed by an integer (row × width +
 * column); only occupied cells exist. Boxes are read row by row, each cell once, or, when
 * they span more cells than are occupied (a continent-sized box), by walking the
 * occupied cells.
 *
 * Storage is columnar, by slot: typed arrays hold each slot's id, longitude, latitude,
 * cell and position within its cell, so a lookup reads a few contiguous arrays and a
 * million points take about 60 bytes each (the id → slot map included). Removal swaps
 * the cell's last slot into the gap: every operation is O(1) apart from the lookup's
 * own size.
 */
import type { BBox } from '../domain/types.js';

export const CELLS_PER_DEGREE = 256;
const WIDTH = 360 * CELLS_PER_DEGREE + 1; // columns for lon -180 … 180 inclusive
const HEIGHT = 180 * CELLS_PER_DEGREE + 1;

const column = (lon: number): number => Math.min(WIDTH - 1, Math.max(0, Math.floor((lon + 180) * CELLS_PER_DEGREE)));
const row = (lat: number): number => Math.min(HEIGHT - 1, Math.max(0, Math.floor((lat + 90) * CELLS_PER_DEGREE)));
const cellKey = (lon: number, lat: number): number => row(lat) * WIDTH + column(lon);

/** Return true to stop the walk. */
export type PointVisitor = (id: number, lon: number, lat: number) => boolean | void;

export class PointGrid {
  private readonly slotOf = new Map<number, number>();
  private readonly cells = new Map<number, number[]>();
  private readonly free: number[] = [];
  private ids = new Float64Array(0);
  private lons = new Float64Array(0);
  private lats = new Float64Array(0);
  private cellOf = new Float64Array(0);
  private posInCell = new Int32Array(0);
  private used = 0;

  get size(): number {
    return this.slotOf.size;
  }

  /** Inserts the point, or moves it when the id is already indexed. */
  set(id: number, lon: number, lat: number): void {
    const key = cellKey(lon, lat);
    let slot = this.slotOf.get(id);
    if (slot !== undefined) {
      this.lons[slot] = lon;
      this.lats[slot] = lat;
      if (this.cellOf[slot] === key) return;
      this.unlink(slot);
    } else {
      slot = this.free.pop() ?? this.grow();
      this.slotOf.set(id, slot);
      this.ids[slot] = id;
      this.lons[slot] = lon;
      this.lats[slot] = lat;
    }
    this.link(slot, key);
  }

  /** Removes the point; false when the id was not indexed. */
  delete(id: number): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    this.unlink(slot);
    this.slotOf.delete(id);
    this.free.push(slot);
    return true;
  }

  /**
   * Visits every point in the cells that overlap the boxes (a superset of the points in
   * them: the caller's exact test decides), each once, until the visitor returns true.
   */
  visit(boxes: readonly BBox[], visitor: PointVisitor): void {
    // Each box as a rectangle of cells [c0, c1] × [r0, r1].
    const rects: [number, number, number, number][] = [];
    let area = 0;
    for (const box of boxes) {
      const rect: [number, number, number, number] = [column(box.minLon), column(box.maxLon), row(box.minLat), row(box.maxLat)];
      if (rect[1] < rect[0] || rect[3] < rect[2]) continue;
      rects.push(rect);
      area += (rect[1] - rect[0] + 1) * (rect[3] - rect[2] + 1);
    }
    if (rects.length === 0) return;
    if (area > this.cells.size) {
      // More cells to probe than occupied: walk the occupied ones.
      for (const [key, slots] of this.cells) {
        const r = Math.floor(key / WIDTH);
        const c = key - r * WIDTH;
        if (rects.some(([c0, c1, r0, r1]) => c >= c0 && c <= c1 && r >= r0 && r <= r1) && this.visitCell(slots, visitor)) return;
      }
      return;
    }
    // Row by row, the merged column intervals of the rectangles on that row: no cell twice.
    let top = -1;
    let bottom = HEIGHT;
    for (const rect of rects) {
      bottom = Math.min(bottom, rect[2]);
      top = Math.max(top, rect[3]);
    }
    const spans: [number, number][] = [];
    for (let r = bottom; r <= top; r++) {
      spans.length = 0;
      for (const [c0, c1, r0, r1] of rects) if (r >= r0 && r <= r1) spans.push([c0, c1]);
      if (spans.length > 1) spans.sort((x, y) => x[0] - y[0]);
      let next = 0; // first column not yet visited on this row
      for (const [c0, c1] of spans) {
        for (let c = Math.max(c0, next); c <= c1; c++) {
          const slots = this.cells.get(r * WIDTH + c);
          if (slots !== undefined && this.visitCell(slots, visitor)) return;
        }
        next = Math.max(next, c1 + 1);
      }
    }
  }

  private visitCell(slots: readonly number[], visitor: PointVisitor): boolean {
    for (const slot of slots) {
      if (visitor(this.ids[slot] as number, this.lons[slot] as number, this.lats[slot] as number) === true) return true;
    }
    return false;
  }

  private link(slot: number, key: number): void {
    let slots = this.cells.get(key);
    if (slots === undefined) {
      slots = [];
      this.cells.set(key, slots);
    }
    this.cellOf[slot] = key;
    this.posInCell[slot] = slots.length;
    slots.push(slot);
  }

  private unlink(slot: number): void {
    const key = this.cellOf[slot] as number;
    const slots = this.cells.get(key);
    if (slots === undefined) return;
    const pos = this.posInCell[slot] as number;
    const last = slots.pop() as number;
    if (last !== slot) {
      slots[pos] = last;
      this.posInCell[last] = pos;
    }
    if (slots.length === 0) this.cells.delete(key);
  }

  /** A new slot at the end, doubling the arrays when full. */
  private grow(): number {
    if (this.used === this.ids.length) {
      const capacity = Math.max(1024, this.ids.length * 2);
      const widen = <T extends Float64Array | Int32Array>(old: T, next: T): T => {
        next.set(old);
        return next;
      };
      this.ids = widen(this.ids, new Float64Array(capacity));
      this.lons = widen(this.lons, new Float64Array(capacity));
      this.lats = widen(this.lats, new Float64Array(capacity));
      this.cellOf = widen(this.cellOf, new Float64Array(capacity));
      this.posInCell = widen(this.posInCell, new Int32Array(capacity));
    }
    return this.used++;
  }
}
