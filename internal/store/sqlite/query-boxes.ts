/**
 * The boxes a shape query reads from the spatial index (location-index.ts) and checks
 * rows against in the ordered plan: shapeBounds, with a polygon's box cut into slabs.
 */
import type { BBox, Shape } from '../../domain/types.js';
import { shapeBounds } from '../../geo/contains.js';

/** Slabs a polygon's box is cut into (see queryBoxes). */
const POLYGON_SLABS = 8;
/** Well above the 1e-9° boundary tolerance and the rounding of the clipping below. */
const SLAB_PAD = 1e-8;

/**
 * The boxes a shape query reads: shapeBounds (internal/geo, which
 * covers every point the shape accepts), except that a polygon's main box is cut into
 * horizontal slabs, each narrowed to the longitudes the polygon's edges reach within it
 * (padded by SLAB_PAD). A star or an L-shape leaves much of its box empty; slabs skip
 * most of it. This only narrows the candidates: the exact test still decides.
 *
 * Why the slabs still cover every accepted point p of a slab: if p is inside the
 * polygon, the horizontal line through p meets the boundary on both sides of p within
 * the slab; if p is outside but within the tolerance of an edge, that edge comes within
 * 1e-9° of p, so within the padded band, at a longitude within 1e-9° of p's. The pole and
 * ±180 boxes of shapeBounds (thinner than a slab) are kept as they are.
 */
export function queryBoxes(shape: Shape): BBox[] {
  const boxes = shapeBounds(shape);
  if (!('points' in shape) || shape.points.length <= 4) return boxes;
  const out: BBox[] = [];
  for (const box of boxes) {
    if (box.maxLat - box.minLat < 1e-6 || box.maxLon - box.minLon < 1e-6) out.push(box);
    else out.push(...slabs(shape.points, box));
  }
  return out;
}

function slabs(points: readonly (readonly [number, number])[], box: BBox): BBox[] {
  const out: BBox[] = [];
  const height = (box.maxLat - box.minLat) / POLYGON_SLABS;
  for (let k = 0; k < POLYGON_SLABS; k++) {
    const y0 = k === 0 ? box.minLat : box.minLat + k * height;
    const y1 = k === POLYGON_SLABS - 1 ? box.maxLat : box.minLat + (k + 1) * height;
    const lo = y0 - SLAB_PAD;
    const hi = y1 + SLAB_PAD;
    let west = Infinity;
    let east = -Infinity;
    for (let i = 0; i < points.length; i++) {
      const [ax, ay] = points[i] as readonly [number, number];
      const [bx, by] = points[(i + 1) % points.length] as readonly [number, number];
      const low = Math.min(ay, by);
      const high = Math.max(ay, by);
      if (high < lo || low > hi) continue;
      if (ay === by) {
        west = Math.min(west, ax, bx);
        east = Math.max(east, ax, bx);
        continue;
      }
      // The edge's longitude is linear in latitude: its extremes within the band are at the band's ends.
      for (const y of [Math.max(lo, low), Math.min(hi, high)]) {
        const x = ax + ((bx - ax) * (y - ay)) / (by - ay);
        west = Math.min(west, x);
        east = Math.max(east, x);
      }
    }
    if (west > east) continue; // no edge here: the polygon does not reach this slab
    out.push({
      minLon: Math.max(box.minLon, west - SLAB_PAD),
      minLat: y0,
      maxLon: Math.min(box.maxLon, east + SLAB_PAD),
      maxLat: y1,
    });
  }
  return out;
}
