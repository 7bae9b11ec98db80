/**
 * Reads of the MongoDB store translated into query documents. Pure.
 *
 * Filters and shapes become prefilters that the indexes can serve and that hold every
 * match; the exact decision stays with the shared code (domain/filter.ts matchesFilter,
 * internal/geo compileShape), applied to each document read (object-store.ts), so that
 * SQLite and MongoDB answer with exactly the same sets. Filters translate exactly (the
 * check after them never drops a document); shapes are covered by spherical caps
 * (`$geoWithin` `$centerSphere`), which a 2dsphere index serves and whose edges, unlike
 * a GeoJSON polygon's geodesic ones, can be made to hold a shape whose edges run straight
 * in longitude and latitude.
 */
import type { BBox, FilterCondition, Shape } from '../../domain/types.js';
import { earthRadiusMeters, haversineMeters, shapeBounds } from '../../geo/contains.js';

export type QueryDoc = Record<string, unknown>;

const NOTHING: QueryDoc = { _id: { $in: [] } };
const RANGE: Record<string, string> = { '>': '$gt', '<': '$lt', '>=': '$gte', '<=': '$lte' };

/** One condition on `_id` or `l` (columns: strings, the label null when unset). */
function columnCondition(path: '_id' | 'l', { op, value }: FilterCondition): QueryDoc | null {
  if (op === '=') {
    if (value === null) return path === '_id' ? NOTHING : { l: null };
    return typeof value === 'string' ? { [path]: value } : NOTHING;
  }
  if (op === '!=') {
    if (value === null) return path === '_id' ? null : { l: { $ne: null } };
    return typeof value === 'string' ? { [path]: { $ne: value } } : null;
  }
  // Ranges compare strings with strings (MongoDB: by UTF-8 bytes, which is code point order).
  return typeof value === 'string' ? { [path]: { [RANGE[op] as string]: value } } : NOTHING;
}

/**
 * One condition on a data key (the pairs `d`: `{k, v}`). A nested value's pair has no `v`
 * (documents.ts: its JSON text is in `j`), so no value condition reaches it: `=` and the
 * orders fail, `!=` holds, `=null` fails and `!=null` holds (the key is there), as
 * matchesFilter decides.
 */
function dataCondition({ field, op, value }: FilterCondition): QueryDoc | null {
  if (op === '=') return value === null ? { d: { $not: { $elemMatch: { k: field } } } } : { d: { $elemMatch: { k: field, v: value } } };
  if (op === '!=') return value === null ? { d: { $elemMatch: { k: field } } } : { d: { $not: { $elemMatch: { k: field, v: value } } } };
  // Numbers with numbers, strings with strings: MongoDB's comparison operators compare within a type.
  if (typeof value !== 'number' && typeof value !== 'string') return NOTHING;
  return { d: { $elemMatch: { k: field, v: { [RANGE[op] as string]: value } } } };
}

/** The query document of a list filter (all conditions), or null for no condition. */
export function filterQuery(conditions: readonly FilterCondition[] | undefined): QueryDoc | null {
  if (conditions === undefined || conditions.length === 0) return null;
  const parts: QueryDoc[] = [];
  for (const condition of conditions) {
    const column = condition.target === undefined && (condition.field === 'id' || condition.field === 'label');
    const part = column ? columnCondition(condition.field === 'id' ? '_id' : 'l', condition) : dataCondition(condition);
    if (part !== null) parts.push(part);
  }
  if (parts.length === 0) return null;
  return parts.length === 1 ? (parts[0] as QueryDoc) : { $and: parts };
}

/** A cap: centre [lon, lat] and angular radius (radians). */
export type Cap = [[number, number], number];

/** Rounding margin added to every cap (radians, ≈ 6 mm). */
const CAP_MARGIN = 1e-9;
/**
 * Every cap is widened by this factor. MongoDB's `$centerSphere` is exact spherical
 * geometry, but services built on DocumentDB (FerretDB 2, Azure Cosmos DB for MongoDB vCore)
 * measure the distance on the WGS84 spheroid and compare it with radius × 6,378,137 m: there
 * a point's geodesic distance is up to 0.34% longer than its central angle × 6,378,137 m
 * (checked with GeographicLib over random pairs; worst near the poles), so a cap of the exact
 * radius misses points just inside its edge. 0.5% covers that.
 */
export const SPHEROID_MARGIN = 1.005;
/**
 * The widest cap sent (radians, 80°). DocumentDB answers caps wider than a hemisphere wrongly
 * (often with nothing), so wider regions are covered by several caps, and this stays clear of
 * a hemisphere by more than the margins.
 */
export const MAX_CAP = (80 * Math.PI) / 180;
/** Caps this wide (or wider) hold the whole sphere: no prefilter. */
const WHOLE_SPHERE = Math.PI - 1e-6;
/** A box this close (degrees) to a pole is covered by a polar cap. */
const POLE_DEG = 1e-6;
/** Widest longitude span of a box measured for a cap; wider ones are cut first. */
const MAX_PIECE_LON = 90;
/** More caps than this for one shape: no prefilter (a shape that large matches most objects anyway). */
const MAX_CAPS = 64;

/** Samples per box edge when measuring a box's cap. */
const EDGE_SAMPLES = 16;

const toRadians = (meters: number): number => meters / earthRadiusMeters;

/** A cap widened by the margins every cap sent carries. */
const widened = (center: [number, number], radius: number): Cap => [center, radius * SPHEROID_MARGIN + CAP_MARGIN];

/**
 * A cap holding every point of a box (longitudes not wrapping), before the margins, or null
 * when the box spans more than half the longitudes (its cap would be most of the sphere).
 * The radius is the farthest of points sampled along the box's edges (the farthest point of
 * a box from its centre lies on its edge while the box holds not the centre's antipode),
 * plus half the longest sampling step (no edge point is farther from a sample).
 */
function boxCapExact(box: BBox): Cap | null {
  // A box reaching a pole: the polar cap down to its other latitude (any longitudes).
  const toRad = Math.PI / 180;
  if (box.maxLat >= 90 - POLE_DEG) return [[0, 90], (90 - box.minLat) * toRad];
  if (box.minLat <= -90 + POLE_DEG) return [[0, -90], (box.maxLat + 90) * toRad];
  if (box.maxLon - box.minLon > 180) return null;
  const lon = (box.minLon + box.maxLon) / 2;
  const lat = (box.minLat + box.maxLat) / 2;
  let far = 0;
  const stepLon = (box.maxLon - box.minLon) / EDGE_SAMPLES;
  const stepLat = (box.maxLat - box.minLat) / EDGE_SAMPLES;
  for (let i = 0; i <= EDGE_SAMPLES; i++) {
    const x = box.minLon + i * stepLon;
    const y = box.minLat + i * stepLat;
    far = Math.max(
      far,
      haversineMeters(lon, lat, x, box.minLat),
      haversineMeters(lon, lat, x, box.maxLat),
      haversineMeters(lon, lat, box.minLon, y),
      haversineMeters(lon, lat, box.maxLon, y),
    );
  }
  const halfStep = (Math.max(stepLon, stepLat) / 2) * toRad;
  return [[lon, lat], toRadians(far) + halfStep];
}

/** The cap sent for a box (with the margins), or null when no cap of at most MAX_CAP holds it. */
export function boxCap(box: BBox): Cap | null {
  const cap = boxCapExact(box);
  if (cap === null) return null;
  const sent = widened(cap[0], cap[1]);
  return sent[1] <= MAX_CAP ? sent : null;
}

/**
 * Caps of at most MAX_CAP holding every point of a box: its own cap, or the caps of its
 * halves. A box reaching a pole is cut in latitude (its polar part keeps a polar cap); one
 * wider than MAX_PIECE_LON in longitude; others across the longer side, longitude counted as
 * wide as it is at the box's widest latitude. Appends to `out`; false when that would take more than MAX_CAPS caps.
 */
export function coverBox(box: BBox, out: Cap[]): boolean {
  const polar = box.maxLat >= 90 - POLE_DEG || box.minLat <= -90 + POLE_DEG;
  const lonSpan = box.maxLon - box.minLon;
  // Wide boxes are cut before they are measured: smaller caps hold fewer objects that are not in the shape.
  const cap = polar || lonSpan <= MAX_PIECE_LON ? boxCap(box) : null;
  if (cap !== null) {
    out.push(cap);
    return out.length <= MAX_CAPS;
  }
  if (out.length >= MAX_CAPS) return false;
  // A polar cap ignores longitude: only a cut in latitude makes it narrower.
  const latSpan = box.maxLat - box.minLat;
  const widestCos = box.minLat <= 0 && box.maxLat >= 0 ? 1 : Math.cos((Math.min(Math.abs(box.minLat), Math.abs(box.maxLat)) * Math.PI) / 180);
  const cutLat = polar || (lonSpan <= MAX_PIECE_LON && latSpan > lonSpan * widestCos);
  if (cutLat) {
    const mid = (box.minLat + box.maxLat) / 2;
    return coverBox({ ...box, maxLat: mid }, out) && coverBox({ ...box, minLat: mid }, out);
  }
  const mid = (box.minLon + box.maxLon) / 2;
  return coverBox({ ...box, maxLon: mid }, out) && coverBox({ ...box, minLon: mid }, out);
}

/**
 * The caps that together hold every point containsPoint accepts for the shape, each at most
 * MAX_CAP wide and widened by the margins, or null when they would cover (most of) the sphere
 * (no prefilter then: every located object is tested). A circle wider than MAX_CAP is covered
 * like the boxes of its bounds.
 */
export function shapeCaps(shape: Shape): Cap[] | null {
  if ('r' in shape) {
    // The test's tolerance (boundaryEpsilonMeters, ≈ 0.1 mm) is well within the margins.
    const angle = toRadians(shape.r) * (1 + 1e-9) + 1e-7 / earthRadiusMeters;
    if (angle >= WHOLE_SPHERE) return null;
    const cap = widened([shape.cx, shape.cy], angle);
    if (cap[1] <= MAX_CAP) return [cap];
  }
  const caps: Cap[] = [];
  for (const box of shapeBounds(shape)) {
    if (!coverBox(box, caps)) return null;
  }
  // Caps whose areas add up to the sphere's select about everything, through the index: a plain scan is cheaper.
  const area = caps.reduce((sum, [, radius]) => sum + 2 * Math.PI * (1 - Math.cos(radius)), 0);
  return area >= 4 * Math.PI ? null : caps;
}

/** The prefilter of a shape on the objects' GeoJSON point `g`. */
export function shapeQuery(shape: Shape): QueryDoc {
  const caps = shapeCaps(shape);
  if (caps === null) return { g: { $exists: true } };
  const within = caps.map(([center, radius]) => ({ g: { $geoWithin: { $centerSphere: [center, radius] } } }));
  return within.length === 1 ? (within[0] as QueryDoc) : { $or: within };
}

/** The query of one list page: after the cursor's id, filter and shape prefilters. */
export function listQuery(after: string, filter: QueryDoc | null, shape: QueryDoc | null): QueryDoc {
  const parts: QueryDoc[] = [];
  if (after !== '') parts.push({ _id: { $gt: after } });
  if (filter !== null) parts.push(filter);
  if (shape !== null) parts.push(shape);
  if (parts.length === 0) return {};
  return parts.length === 1 ? (parts[0] as QueryDoc) : { $and: parts };
}

/** Fields a list reads: everything but the search words and the index copies of the fix. */
export const OBJECT_READ_PROJECTION = { wi: 0, wl: 0, 'd.w': 0, g: 0, t: 0 } as const;

/** An anchored prefix match (served by the words' ascending index); words hold only letters and digits. */
function prefix(word: string): { $regex: string } {
  return { $regex: `^${word.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}` };
}

/** How often `word` prefixes a word of the array expression `words`. */
function prefixCount(words: unknown, word: string): unknown {
  return { $size: { $filter: { input: words, cond: { $eq: [{ $indexOfCP: ['$$this', { $literal: word }] }, 0] } } } };
}

/**
 * The search aggregation: objects where every query word prefixes a word of the id, the
 * label or a data value; scored by matches (label ×3, id ×2, data ×1) over the object's
 * word count (a short label full of the word ranks first), best first, then by id.
 */
export function searchPipeline(words: readonly string[], limit: number, projection: Record<string, 0 | 1>): QueryDoc[] {
  const dataWords = { $reduce: { input: { $ifNull: ['$d', []] }, initialValue: [], in: { $concatArrays: ['$$value', { $ifNull: ['$$this.w', []] }] } } };
  const wi = { $ifNull: ['$wi', []] };
  const wl = { $ifNull: ['$wl', []] };
  const matches = words.map((word) => ({
    $add: [{ $multiply: [3, prefixCount(wl, word)] }, { $multiply: [2, prefixCount(wi, word)] }, prefixCount('$$dw', word)],
  }));
  return [
    { $match: { $and: words.map((word) => ({ $or: [{ wi: prefix(word) }, { wl: prefix(word) }, { 'd.w': prefix(word) }] })) } },
    {
      $addFields: {
        _score: {
          $let: {
            vars: { dw: dataWords },
            in: { $divide: [{ $add: matches }, { $add: [1, { $multiply: [0.1, { $add: [{ $size: wi }, { $size: wl }, { $size: '$$dw' }] }] }] }] },
          },
        },
      },
    },
    { $sort: { _score: -1, _id: 1 } },
    { $limit: limit },
    { $project: projection },
  ];
}

/** The query of one page of an object's history. */
export function historyQuery(id: string, range: { from?: string; to?: string }, cursor: string | null, asc: boolean): QueryDoc {
  const t: Record<string, string> = {};
  if (range.from !== undefined) t.$gte = range.from;
  if (range.to !== undefined) t.$lte = range.to;
  if (cursor !== null) {
    if (asc) t.$gt = cursor;
    else t.$lt = cursor;
  }
  return Object.keys(t).length === 0 ? { o: id } : { o: id, t };
}
