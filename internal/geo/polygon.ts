/**
 * Planar polygon math on [longitude, latitude] pairs, edges straight in lon/lat as in
 * RFC 7946. Pure: no I/O, no dependencies.
 *
 * Why not @turf/turf `kinks`: it tests every pair of edges (O(n²): about 3 s for a
 * 10,000-vertex ring on Node 20), treats parallel and collinear edges as never
 * intersecting (a ring folded back onto itself passes), and uses plain floating-point
 * arithmetic. Here the orientation predicate is exact (a floating-point filter with an
 * exact BigInt fallback) and self-intersection is found by a Shamos–Hoey sweep in
 * O(n log n).
 */

/** A vertex: [longitude, latitude]. */
export type Point = readonly [number, number];

// ---------------------------------------------------------------------------
// Exact orientation
// ---------------------------------------------------------------------------

/** Shewchuk's error bound for the orient2d filter: (3 + 16ε)ε with ε = 2⁻⁵³. */
const ORIENT_ERRBOUND = (3 + 16 * 2 ** -53) * 2 ** -53;

const scratch = new DataView(new ArrayBuffer(8));

/** The finite double `x` times 2¹⁰⁷⁴, as an exact BigInt (every finite double is a multiple of 2⁻¹⁰⁷⁴). */
function scaledBigInt(x: number): bigint {
  scratch.setFloat64(0, x);
  const hi = scratch.getUint32(0);
  const lo = scratch.getUint32(4);
  const exponent = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let shift = 0n;
  if (exponent !== 0) {
    mantissa |= 1n << 52n;
    shift = BigInt(exponent - 1);
  }
  const magnitude = mantissa << shift;
  return hi >>> 31 === 1 ? -magnitude : magnitude;
}

function orientationExact(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): -1 | 0 | 1 {
  const Ax = scaledBigInt(ax);
  const Ay = scaledBigInt(ay);
  const Bx = scaledBigInt(bx);
  const By = scaledBigInt(by);
  const Cx = scaledBigInt(cx);
  const Cy = scaledBigInt(cy);
  const det = (Ax - Cx) * (By - Cy) - (Ay - Cy) * (Bx - Cx);
  return det > 0n ? 1 : det < 0n ? -1 : 0;
}

function orient(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): -1 | 0 | 1 {
  const detLeft = (ax - cx) * (by - cy);
  const detRight = (ay - cy) * (bx - cx);
  const det = detLeft - detRight;
  let detSum: number;
  if (detLeft > 0) {
    if (detRight <= 0) return det > 0 ? 1 : det < 0 ? -1 : 0;
    detSum = detLeft + detRight;
  } else if (detLeft < 0) {
    if (detRight >= 0) return det > 0 ? 1 : det < 0 ? -1 : 0;
    detSum = -detLeft - detRight;
  } else {
    // detLeft is exactly 0: one factor is exactly 0 (a difference of doubles is 0 only
    // when they are equal), so det = -detRight and its sign is exact. Only an
    // underflowing product (coordinates closer than ~1e-154) escapes this; go exact then.
    if (detRight === 0 || (ax !== cx && by !== cy)) return orientationExact(ax, ay, bx, by, cx, cy);
    return detRight > 0 ? -1 : 1;
  }
  const bound = ORIENT_ERRBOUND * detSum;
  if (det > bound) return 1;
  if (-det > bound) return -1;
  return orientationExact(ax, ay, bx, by, cx, cy);
}

/**
 * The exact sign of the turn a → b → c: 1 counterclockwise (c left of a→b), -1
 * clockwise, 0 collinear. Coordinates must be finite.
 */
export function orientation(a: Point, b: Point, c: Point): -1 | 0 | 1 {
  return orient(a[0], a[1], b[0], b[1], c[0], c[1]);
}

/** c lies within the bounding box of segment ab (closed); with orientation 0, on the segment. */
function inBox(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): boolean {
  return (
    (ax <= bx ? ax <= cx && cx <= bx : bx <= cx && cx <= ax) && (ay <= by ? ay <= cy && cy <= by : by <= cy && cy <= ay)
  );
}

function segmentsMeet(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  cx: number,
  cy: number,
  dx: number,
  dy: number,
): boolean {
  const o1 = orient(ax, ay, bx, by, cx, cy);
  const o2 = orient(ax, ay, bx, by, dx, dy);
  const o3 = orient(cx, cy, dx, dy, ax, ay);
  const o4 = orient(cx, cy, dx, dy, bx, by);
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  if (o1 === 0 && inBox(ax, ay, bx, by, cx, cy)) return true;
  if (o2 === 0 && inBox(ax, ay, bx, by, dx, dy)) return true;
  if (o3 === 0 && inBox(cx, cy, dx, dy, ax, ay)) return true;
  if (o4 === 0 && inBox(cx, cy, dx, dy, bx, by)) return true;
  return false;
}

/** True when the closed segments ab and cd share at least one point (exact). */
export function segmentsIntersect(a: Point, b: Point, c: Point, d: Point): boolean {
  return segmentsMeet(a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1]);
}

// ---------------------------------------------------------------------------
// Area
// ---------------------------------------------------------------------------

/**
 * Signed doubled area of the ring (shoelace; the ring is closed implicitly, a repeated
 * closing vertex adds nothing): positive when counterclockwise. Coordinates are taken
 * relative to the first vertex to limit cancellation.
 */
export function polygonArea2(points: readonly Point[]): number {
  const first = points[0];
  if (first === undefined) return 0;
  const [x0, y0] = first;
  let sum = 0;
  for (let i = 1; i + 1 < points.length; i++) {
    const p = points[i] as Point;
    const q = points[i + 1] as Point;
    sum += (p[0] - x0) * (q[1] - y0) - (q[0] - x0) * (p[1] - y0);
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Self-intersection
// ---------------------------------------------------------------------------

/**
 * The ring without consecutive repeated vertices (including a closing vertex equal to
 * the first), with the index in `points` of every vertex kept.
 */
export function ringWithoutRepeats(points: readonly Point[]): { ring: Point[]; index: number[] } {
  const ring: Point[] = [];
  const index: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as Point;
    const last = ring[ring.length - 1];
    if (last !== undefined && last[0] === p[0] && last[1] === p[1]) continue;
    ring.push(p);
    index.push(i);
  }
  while (ring.length > 1) {
    const first = ring[0] as Point;
    const last = ring[ring.length - 1] as Point;
    if (first[0] !== last[0] || first[1] !== last[1]) break;
    ring.pop();
    index.pop();
  }
  return { ring, index };
}

/**
 * Finds two edges of the closed ring that meet where they must not, or returns null when
 * the ring is simple. Edge k runs from vertex k to vertex k+1 (the last one back to
 * vertex 0); the returned pair [i, j] (i < j) gives edges by the index in `points` of
 * their first vertex.
 *
 * Rules: edges that follow each other share their common vertex and that is allowed;
 * they intersect only when they fold back over each other (collinear overlap). Any
 * other two edges must have no point in common: crossing, touching at a vertex and
 * collinear overlap are all intersections. Consecutive repeated vertices (zero-length
 * edges, a closing vertex equal to the first) are ignored. A ring of two distinct
 * vertices folds back on itself and is reported; fewer have no edges.
 *
 * Shamos–Hoey sweep in O(n log n): the sweep runs in lexicographic (x, then y) order,
 * which behaves like an infinitesimally tilted sweep line, so vertical edges need no
 * special case; at one event point insertions run before removals so that edges that
 * merely touch there are compared. Any pair that ever becomes neighbours in the sweep
 * status is tested with the exact predicate, and the leftmost forbidden intersection
 * always has such a pair.
 */
export function findSelfIntersection(points: readonly Point[]): [number, number] | null {
  const { ring, index } = ringWithoutRepeats(points);
  const n = ring.length;
  if (n < 2) return null;
  if (n === 2) return [index[0] as number, index[1] as number];

  // Edge k: from ring[k] to ring[k+1]; stored with its lexicographically smaller end first.
  const lx = new Float64Array(n);
  const ly = new Float64Array(n);
  const rx = new Float64Array(n);
  const ry = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const p = ring[k] as Point;
    const q = ring[(k + 1) % n] as Point;
    if (p[0] < q[0] || (p[0] === q[0] && p[1] < q[1])) {
      lx[k] = p[0];
      ly[k] = p[1];
      rx[k] = q[0];
      ry[k] = q[1];
    } else {
      lx[k] = q[0];
      ly[k] = q[1];
      rx[k] = p[0];
      ry[k] = p[1];
    }
  }

  const forbidden = (a: number, b: number): boolean => {
    const [i, j] = a < b ? [a, b] : [b, a];
    let shared = -1; // the vertex index both edges have, when they follow each other
    let before = -1;
    let after = -1;
    if (j === i + 1) {
      shared = j;
      before = i;
      after = (j + 1) % n;
    } else if (i === 0 && j === n - 1) {
      shared = 0;
      before = n - 1;
      after = 1;
    }
    if (shared < 0) return segmentsMeet(lx[i]!, ly[i]!, rx[i]!, ry[i]!, lx[j]!, ly[j]!, rx[j]!, ry[j]!);
    // Consecutive edges before→shared→after: they meet beyond the shared vertex only when
    // collinear and pointing the same way from it (the ring folds back).
    const p = ring[before] as Point;
    const s = ring[shared] as Point;
    const q = ring[after] as Point;
    if (orientation(p, s, q) !== 0) return false;
    if (p[0] !== s[0]) return p[0] < s[0] === q[0] < s[0];
    return p[1] < s[1] === q[1] < s[1];
  };

  // Order of two edges in the sweep status, valid while both are active and meet nowhere
  // left of the sweep: decided at the later left end point (then the other end point).
  const compare = (s: number, t: number): number => {
    if (s === t) return 0;
    const sLater = lx[s]! > lx[t]! || (lx[s] === lx[t] && ly[s]! >= ly[t]!);
    const u = sLater ? s : t;
    const v = sLater ? t : s;
    let o: number = orient(lx[v]!, ly[v]!, rx[v]!, ry[v]!, lx[u]!, ly[u]!);
    if (o === 0) o = orient(lx[v]!, ly[v]!, rx[v]!, ry[v]!, rx[u]!, ry[u]!);
    if (o === 0) return s - t; // collinear: any consistent order
    return sLater ? o : -o;
  };

  // Events: 2k inserts edge k at its left end, 2k+1 removes it at its right end.
  const events = new Int32Array(2 * n);
  for (let e = 0; e < 2 * n; e++) events[e] = e;
  const ex = (e: number): number => (e & 1 ? rx[e >> 1]! : lx[e >> 1]!);
  const ey = (e: number): number => (e & 1 ? ry[e >> 1]! : ly[e >> 1]!);
  events.sort((a, b) => ex(a) - ex(b) || ey(a) - ey(b) || (a & 1) - (b & 1) || a - b);

  const status: number[] = [];
  const position = (k: number): number => {
    let lo = 0;
    let hi = status.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(status[mid]!, k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const result = (a: number, b: number): [number, number] => {
    const ia = index[a]!;
    const ib = index[b]!;
    return ia < ib ? [ia, ib] : [ib, ia];
  };

  for (const e of events) {
    const k = e >> 1;
    if ((e & 1) === 0) {
      const at = position(k);
      status.splice(at, 0, k);
      const below = status[at - 1];
      const above = status[at + 1];
      if (below !== undefined && forbidden(below, k)) return result(below, k);
      if (above !== undefined && forbidden(above, k)) return result(above, k);
    } else {
      let at = position(k);
      if (status[at] !== k) at = status.indexOf(k); // cannot happen while the status is ordered
      status.splice(at, 1);
      const below = status[at - 1];
      const above = status[at];
      if (below !== undefined && above !== undefined && forbidden(below, above)) return result(below, above);
    }
  }
  return null;
}

/** True when the closed ring crosses, touches or overlaps itself (see findSelfIntersection). */
export function isSelfIntersecting(points: readonly Point[]): boolean {
  return findSelfIntersection(points) !== null;
}
