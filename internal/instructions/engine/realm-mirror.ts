/**
 * One realm's objects and areas in memory, as the instruction engine evaluates them: a point
 * grid (geo/point-grid.ts) answers "objects near a point" and "objects in a shape", an area
 * index (geofence/area-index.ts) answers "areas containing a point"; the exact decisions are
 * geo/contains.ts's, so a distance is a circle's (great-circle, inclusive, decisions.md) and
 * "inside" is a shape's. The engine applies every change here before it evaluates the change.
 * Pure: no I/O.
 */
import type { Area, Location, Shape, TrackedObject } from '../../domain/types.js';
import { compileShape, shapeBounds } from '../../geo/contains.js';
import { PointGrid } from '../../geo/point-grid.js';
import { AreaIndex } from '../../geofence/area-index.js';

/** True when `partner` lies within `radius` metres of `input` (a circle of that radius around the input). */
export function withinRadius(input: Location, partner: Location, radius: number): boolean {
  return compileShape({ cx: input.longitude, cy: input.latitude, r: radius })(partner.longitude, partner.latitude);
}

/** True when two shapes are the same shape (an area's write that changed only its label or data). */
export function sameShape(a: Shape, b: Shape): boolean {
  if (a === b) return true;
  if ('r' in a) return 'r' in b && a.cx === b.cx && a.cy === b.cy && a.r === b.r;
  if ('points' in a) {
    if (!('points' in b) || a.points.length !== b.points.length) return false;
    return a.points.every(([x, y], i) => b.points[i]?.[0] === x && b.points[i]?.[1] === y);
  }
  return 'w' in b && a.w === b.w && a.n === b.n && a.e === b.e && a.s === b.s;
}

export class RealmMirror {
  private readonly objectMap = new Map<string, TrackedObject>();
  private readonly areaMap = new Map<string, Area>();
  private readonly grid = new PointGrid();
  /** The grid's numeric ids: id → number and back; numbers of deleted objects are reused. */
  private readonly numberOf = new Map<string, number>();
  private readonly idOf: string[] = [];
  private readonly freeNumbers: number[] = [];
  private readonly areaIndex = new AreaIndex();

  constructor(objects: Iterable<TrackedObject> = [], areas: Iterable<Area> = []) {
    for (const obj of objects) this.applyObject(null, obj);
    for (const area of areas) this.applyArea(null, area);
  }

  get objects(): ReadonlyMap<string, TrackedObject> {
    return this.objectMap;
  }

  get areas(): ReadonlyMap<string, Area> {
    return this.areaMap;
  }

  object(id: string): TrackedObject | null {
    return this.objectMap.get(id) ?? null;
  }

  area(id: string): Area | null {
    return this.areaMap.get(id) ?? null;
  }

  /** Applies an object's change: `next` null deletes `prev`'s id. */
  applyObject(prev: TrackedObject | null, next: TrackedObject | null): void {
    if (next === null) {
      if (prev === null) return;
      this.objectMap.delete(prev.id);
      this.unplace(prev.id);
      return;
    }
    this.objectMap.set(next.id, next);
    if (next.location === null) this.unplace(next.id);
    else this.place(next.id, next.location);
  }

  /** Applies an area's change: `next` null deletes `prev`'s id. */
  applyArea(prev: Area | null, next: Area | null): void {
    if (next === null) {
      if (prev === null) return;
      this.areaMap.delete(prev.id);
      this.areaIndex.remove(prev.id);
      return;
    }
    const old = this.areaMap.get(next.id);
    this.areaMap.set(next.id, next);
    if (old === undefined || !sameShape(old.shape, next.shape)) this.areaIndex.put(next);
  }

  /** Objects within `radius` metres of the point (inclusive), until the visitor returns true. */
  visitNear(lon: number, lat: number, radius: number, visitor: (obj: TrackedObject) => boolean | void): void {
    this.visitInside({ cx: lon, cy: lat, r: radius }, visitor);
  }

  /** Objects inside the shape, until the visitor returns true. */
  visitInside(shape: Shape, visitor: (obj: TrackedObject) => boolean | void): void {
    const test = compileShape(shape);
    this.grid.visit(shapeBounds(shape), (n, lon, lat) => {
      if (!test(lon, lat)) return false;
      return visitor(this.objectMap.get(this.idOf[n] as string) as TrackedObject);
    });
  }

  /** The areas containing the point. */
  areasContaining(lon: number, lat: number): Area[] {
    return this.areaIndex.containing(lon, lat).map((id) => this.areaMap.get(id) as Area);
  }

  private place(id: string, location: Location): void {
    let n = this.numberOf.get(id);
    if (n === undefined) {
      n = this.freeNumbers.pop() ?? this.idOf.length;
      this.numberOf.set(id, n);
      this.idOf[n] = id;
    }
    this.grid.set(n, location.longitude, location.latitude);
  }

  private unplace(id: string): void {
    const n = this.numberOf.get(id);
    if (n === undefined) return;
    this.grid.delete(n);
    this.numberOf.delete(id);
    this.freeNumbers.push(n);
  }
}
