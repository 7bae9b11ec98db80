/**
 * The workload of the two Hivekit subscription benches (in process and over WebSocket): the box
 * the objects move in, their data, the mix of 1,000 subscriptions, the moves, and the timing of
 * the records pushed.
 */

/** Where the objects are and move: lon 13..14, lat 52..52.8. */
export const box = { west: 13, south: 52, width: 1, height: 0.8 } as const;

/** `count` positions [lon, lat] spread over the box. */
export function startPositions(count: number, rnd: () => number): [number, number][] {
  return Array.from({ length: count }, () => [box.west + rnd() * box.width, box.south + rnd() * box.height] as [number, number]);
}

/** The data of object `i` (what the subscriptions' conditions test). */
export function objectData(i: number, rnd: () => number): Record<string, string | number> {
  return { type: i % 3 === 0 ? 'car' : 'bike', team: `t${i % 97}`, charge: Math.round(rnd() * 100) / 100 };
}

/**
 * The Hivekit options (`dat`) of subscription number `k` of the mix: circles of 300–3,000 m,
 * rectangles, polygons, circles with an attribute condition, whole-realm with a narrow
 * condition, and targets (2 km around object `obj-…` of `objectCount`).
 */
export function subscriptionOptions(k: number, rnd: () => number, objectCount: number): Record<string, unknown> {
  const lon = box.west + rnd() * box.width;
  const lat = box.south + rnd() * box.height;
  const kind = k % 20;
  if (kind < 8) return { typ: 'obj', sty: 'cir', sha: { cx: lon, cy: lat, r: 300 + rnd() * 2700 } };
  if (kind < 11) {
    const w = 0.01 + rnd() * 0.04;
    return { typ: 'obj', sty: 'rec', sha: { x1: lon, y1: lat, x2: lon + w, y2: lat + w * 0.6 } };
  }
  if (kind < 13) {
    const d = 0.01 + rnd() * 0.03;
    return { typ: 'obj', sty: 'pol', sha: { points: [{ x: lon, y: lat }, { x: lon + d, y: lat }, { x: lon + d / 2, y: lat + d }] } };
  }
  if (kind < 17) return { typ: 'obj', sty: 'cir', sha: { cx: lon, cy: lat, r: 1000 + rnd() * 4000 }, atr: [k % 2 === 0 ? 'type="car"' : 'charge>0.5'] };
  if (kind < 18) return { typ: 'obj', sty: 'rea', atr: [`team="t${k % 97}"`] };
  return { typ: 'obj', sty: 'tar', sta: { id: `obj-${Math.floor(rnd() * objectCount)}`, r: 2000 } };
}

/** Moves an object picked at random a little (staying in the box); returns its number, its position is `positions[n]`. */
export function moveOne(positions: [number, number][], move: () => number): number {
  const n = Math.floor(move() * positions.length);
  const p = positions[n] as [number, number];
  p[0] = Math.min(box.west + box.width, Math.max(box.west, p[0] + (move() - 0.5) * 0.004));
  p[1] = Math.min(box.south + box.height, Math.max(box.south, p[1] + (move() - 0.5) * 0.003));
  return n;
}

/** The records of a pushed `obj` map: created and updated ones, each with its location. */
export type PushedObjects = Record<string, Record<string, { loc: { alt: number } }> | undefined>;

/**
 * Adds to `samples` the latency of each created or updated record pushed (`arrived` minus the
 * send time its altitude carries), for those sent from `measuredFrom` on.
 */
export function timeRecords(obj: PushedObjects, arrived: number, measuredFrom: number, samples: number[]): void {
  for (const map of [obj.cre, obj.upd]) {
    if (map === undefined) continue;
    for (const id in map) {
      const sent = (map[id] as { loc: { alt: number } }).loc.alt;
      if (sent >= measuredFrom) samples.push(arrived - sent);
    }
  }
}
