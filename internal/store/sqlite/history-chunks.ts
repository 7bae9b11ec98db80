/**
 * Past fixes in `history` as chunks (schema.ts version 10): one row holds the fixes of
 * one object over a short time, in time order, encoded as an object row holds them
 * (history-rows.ts appendPast). The key is the object's rowid and the chunk's last time
 * (the unique index `history_by_object`: since schema.ts version 15 chunks are appended in
 * the order they are written, so that a batch's flushes share the table's last pages); the
 * row also has its first time and its number of fixes.
 *
 * Invariants, which the reads rely on:
 * - an object has one stored fix per time: storing fixes first removes those of the
 *   same times from the chunks that hold them (a later write of an equal time wins), so
 *   two chunks of an object never end at the same time;
 * - a chunk spans at most CHUNK_SPAN_MS (chunkFixes cuts them so): a chunk holding a
 *   time t ends between t and t + span.
 *
 * A flush of an object's held fixes (PAST_BUFFER_FIXES of them) was one insert per fix
 * before, each a seek into the object's place of the table; it is one insert now.
 * Measured (10,000 objects, flushes of 8 fixes, 125 a transaction): 14–18 µs a flush
 * instead of 32–47. Reads find an object's chunks through the index, one lookup each
 * (a page of 500 fixes of one of 2,000 trackers with 600 fixes each: 0.7–1.5 ms, warm
 * cache, as with the chunks clustered by object).
 */
import type { Database, Statement } from 'better-sqlite3';
import { appendPast, CHUNK_FIXES, CHUNK_LIMITS, chunkFixes, decodePast, encodePastInto, MAX_FIX_BYTES, withinLimits, type ChunkLimits, type HistoryBound, type StoredFix } from './history-rows.js';

/** The chunks of the objects of an id range of a realm (the parameters: realm, after, last id). */
const RANGE_OBJECTS = 'orow IN (SELECT rowid FROM objects WHERE realm = ? AND id > ? AND id <= ?)';

/** Deletes the chunks ending before a time (ms) of the objects in an id range of a realm. */
export const PRUNE_CHUNKS_SQL = `DELETE FROM history WHERE ${RANGE_OBJECTS} AND last < ? RETURNING n`;

/** The chunks of one object ending in a time range, in the order of a page. */
export function chunkPageSql(asc: boolean): string {
  return `SELECT last, fixes FROM history WHERE orow = ? AND last >= ? AND last <= ? ORDER BY last ${asc ? 'ASC' : 'DESC'}`;
}

/** The need-th smallest (asc) or largest time of some fixes (at least need of them). */
function kthTime(fixes: readonly StoredFix[], need: number, asc: boolean): number {
  const times = fixes.map((fix) => fix[0]);
  times.sort(asc ? (a, b) => a - b : (a, b) => b - a);
  return times[need - 1] as number;
}

export class HistoryChunks {
  private readonly insert: Statement<[number, number, number, number, Uint8Array]>;
  private readonly lastOf: Statement<[number], number | null>;
  private readonly ending: Statement<[number, number, number], [number, Buffer]>;
  private readonly remove: Statement<[number, number]>;
  private readonly pageAsc: Statement<[number, number, number], [number, Buffer]>;
  private readonly pageDesc: Statement<[number, number, number], [number, Buffer]>;
  private readonly pruneWhole: Statement<[string, string, string, number], [number]>;
  private readonly straddling: Statement<[string, string, string, number, number, number], [number, number, Buffer]>;
  private readonly rewrite: Statement<[number, number, Uint8Array, number, number]>;
  /** Where a chunk is encoded to be bound (no buffer allocated per chunk). */
  private readonly scratch: Buffer;

  constructor(
    db: Database,
    private readonly limits: ChunkLimits = CHUNK_LIMITS,
  ) {
    this.scratch = Buffer.alloc(MAX_FIX_BYTES * Math.max(limits.fixes, CHUNK_FIXES));
    this.insert = db.prepare('INSERT INTO history (orow, last, first, n, fixes) VALUES (?, ?, ?, ?, ?)');
    this.lastOf = db.prepare<[number], number | null>('SELECT max(last) FROM history WHERE orow = ?').pluck();
    this.ending = db.prepare<[number, number, number], [number, Buffer]>('SELECT last, fixes FROM history WHERE orow = ? AND last >= ? AND last <= ?').raw(true);
    this.remove = db.prepare('DELETE FROM history WHERE orow = ? AND last = ?');
    this.pageAsc = db.prepare<[number, number, number], [number, Buffer]>(chunkPageSql(true)).raw(true);
    this.pageDesc = db.prepare<[number, number, number], [number, Buffer]>(chunkPageSql(false)).raw(true);
    this.pruneWhole = db.prepare<[string, string, string, number], [number]>(PRUNE_CHUNKS_SQL).raw(true);
    // Chunks ending after the cut that may start before it: they end within a span of it.
    this.straddling = db
      .prepare<[string, string, string, number, number, number], [number, number, Buffer]>(
        `SELECT orow, last, fixes FROM history WHERE ${RANGE_OBJECTS} AND last >= ? AND last <= ? AND first < ?`,
      )
      .raw(true);
    this.rewrite = db.prepare('UPDATE history SET first = ?, n = ?, fixes = ? WHERE orow = ? AND last = ?');
  }

  /** Stores past fixes of an object (in write order; a later one of an equal time wins, over stored ones too). */
  add(orow: number, fixes: readonly StoredFix[]): void {
    const chunks = chunkFixes(fixes, this.limits);
    const firstChunk = chunks[0];
    const lastChunk = chunks[chunks.length - 1];
    if (firstChunk === undefined || lastChunk === undefined) return;
    const first = (firstChunk[0] as StoredFix)[0];
    const last = (lastChunk[lastChunk.length - 1] as StoredFix)[0];
    // A tracker's fixes come in time order: then every stored one is older, and the
    // object's last chunk says so (one seek, to the page the insert writes).
    const stored = this.lastOf.get(orow) ?? null;
    if (stored !== null && stored >= first) {
      const times = new Set<number>();
      for (const chunk of chunks) for (const fix of chunk) times.add(fix[0]);
      // The chunks that may hold one of these times end within a span after it.
      for (const [end, blob] of this.ending.all(orow, first, last + this.limits.span)) {
        const held = decodePast(blob);
        const kept = held.filter((fix) => !times.has(fix[0]));
        if (kept.length === held.length) continue;
        this.remove.run(orow, end);
        // Its other fixes, still in order and within a span: a chunk again.
        if (kept.length > 0) this.put(orow, kept);
      }
    }
    for (const chunk of chunks) this.put(orow, chunk);
  }

  /** A chunk's fixes as bound: a view of the scratch buffer. */
  private encode(fixes: readonly StoredFix[]): Buffer {
    // A chunk written under other limits may hold more.
    return fixes.length * MAX_FIX_BYTES <= this.scratch.length ? encodePastInto(this.scratch, fixes) : appendPast(null, fixes);
  }

  private put(orow: number, chunk: readonly StoredFix[]): void {
    this.insert.run(orow, (chunk[chunk.length - 1] as StoredFix)[0], (chunk[0] as StoredFix)[0], chunk.length, this.encode(chunk));
  }

  /**
   * The fixes of a history page of one object: those stored within the bounds (times in
   * ms: fixTime) merged with `held` (the fixes its row holds, within the bounds, which
   * replace stored ones of an equal time), in the page's order, at most `need`.
   *
   * Chunks are read in the order of their last time, from the bound's side. Reading
   * ascending, once a chunk ending at L is read, every fix before L - span is known
   * (a later chunk starts after that); descending, every fix after L. The read stops once
   * the page's `need` fixes are known.
   */
  page(orow: number, limits: readonly [HistoryBound[0], number][], asc: boolean, need: number, held: ReadonlyMap<number, StoredFix>): StoredFix[] {
    const span = this.limits.span;
    let low = Number.MIN_SAFE_INTEGER;
    let high = Number.MAX_SAFE_INTEGER;
    for (const [op, time] of limits) {
      if (op === '>=' || op === '>') low = Math.max(low, time);
      else high = Math.min(high, time);
    }
    const found: StoredFix[] = [...held.values()];
    // The need-th time of the page among those found (NaN: not known since the last read
    // that may have changed it): once every fix on its side of the last chunk's edge is
    // known, the page is.
    let kth = Number.NaN;
    // A chunk ending past high + span starts after high.
    for (const [last, blob] of (asc ? this.pageAsc : this.pageDesc).iterate(orow, low, Math.min(high + span, Number.MAX_SAFE_INTEGER))) {
      for (const fix of decodePast(blob)) {
        if (held.has(fix[0]) || !withinLimits(fix[0], limits)) continue;
        found.push(fix);
        // A fix before the need-th (after it, descending) moves it.
        if (asc ? fix[0] < kth : fix[0] > kth) kth = Number.NaN;
      }
      if (found.length < need) continue;
      if (Number.isNaN(kth)) kth = kthTime(found, need, asc);
      // Leaving the loop resets the statement (the iterator's return()).
      if (asc ? kth < last - span : kth > last) break;
    }
    found.sort(asc ? (a, b) => a[0] - b[0] : (a, b) => b[0] - a[0]);
    if (found.length > need) found.length = need;
    return found;
  }

  /**
   * Deletes the stored fixes before `cut` (ms) of the objects with ids in (after, end] of
   * a realm; returns how many.
   */
  prune(realm: string, after: string, end: string, cut: number): number {
    let deleted = 0;
    for (const [n] of this.pruneWhole.all(realm, after, end, cut)) deleted += n;
    for (const [orow, last, blob] of this.straddling.all(realm, after, end, cut, cut + this.limits.span, cut)) {
      const fixes = decodePast(blob);
      const kept = fixes.filter((fix) => fix[0] >= cut);
      deleted += fixes.length - kept.length;
      // The chunk ends after the cut: it keeps at least its last fix, and its key.
      this.rewrite.run((kept[0] as StoredFix)[0], kept.length, this.encode(kept), orow, last);
    }
    return deleted;
  }
}
