/**
 * What the SQLite R*Tree (`object_rtree`, schema.ts) holds for a located object: the
 * cell of a 2⁻¹⁰° grid that contains the location, in the realm's slice [key, key + 0.5].
 *
 * x · 1024 and k / 1024 are exact in binary floating point, so floor(x · 1024) / 1024 ≤
 * x < (floor(x · 1024) + 1) / 1024 holds exactly: the cell always holds the point, and
 * float32 rounding (outward) only widens it. A location update that stays in its cell
 * leaves the R*Tree as it is. Queries take R*Tree entries as candidates only; the exact
 * test on objects.lon/lat decides.
 */
export const CELLS_PER_DEGREE = 1024;

/** The cell index of a coordinate. */
export function cellOf(x: number): number {
  return Math.floor(x * CELLS_PER_DEGREE);
}

/** R*Tree columns after the rowid: realm_lo, realm_hi, min_lon, max_lon, min_lat, max_lat. */
export type CellBox = [number, number, number, number, number, number];

export function cellBox(key: number, lon: number, lat: number): CellBox {
  const x = cellOf(lon);
  const y = cellOf(lat);
  return [key, key + 0.5, x / CELLS_PER_DEGREE, (x + 1) / CELLS_PER_DEGREE, y / CELLS_PER_DEGREE, (y + 1) / CELLS_PER_DEGREE];
}

/** True when both locations lie in the same cell (the R*Tree entry stays valid). */
export function sameCell(lon1: number, lat1: number, lon2: number, lat2: number): boolean {
  return cellOf(lon1) === cellOf(lon2) && cellOf(lat1) === cellOf(lat2);
}
