/** Data the v1 benches share: a deterministic random sequence and the 100 areas every update is tested against. */

/** How many objects (`obj-0` …) the v1 benches move over the region of the areas. */
export const benchObjectCount = 10_000;

/** A deterministic pseudo-random sequence (so runs are comparable). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** 100 areas over the region the objects move in (lon 5..15, lat 45..55): circles, rectangles, polygons (REST shapes). */
export function benchAreas(): { id: string; shape: unknown }[] {
  const rnd = random(7);
  return Array.from({ length: 100 }, (_, i) => {
    const lon = 5 + rnd() * 10;
    const lat = 45 + rnd() * 10;
    const size = 0.2 + rnd() * 0.8;
    const shape =
      i % 3 === 0
        ? { cx: lon, cy: lat, r: size * 50_000 }
        : i % 3 === 1
          ? { w: lon, s: lat, e: lon + size, n: lat + size }
          : {
              points: Array.from({ length: 12 }, (_v, k) => {
                const angle = (k / 12) * 2 * Math.PI;
                const radius = size * (0.6 + 0.4 * (k % 2));
                return [lon + radius * Math.cos(angle), lat + radius * Math.sin(angle)];
              }),
            };
    return { id: `area-${i}`, shape };
  });
}
