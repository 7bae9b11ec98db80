/**
 * The best hits of a one-word search with many matches (a common prefix: `müller` starts
 * the words of a tenth of a realm), without scoring every match.
 *
 * FTS5 ranks by `rank` = bm25(2.0, 1.0) (search-file.ts): for one query word w, an
 * entry's rank depends only on its weighted count of tokens starting with w (each in
 * `names` counts 2, each in `terms` 1) and its length in tokens; the answer is the
 * `limit` best by rank, equal ranks by rowid (FTS5 sorts all matches, stably, in rowid
 * order; test/integration/search-top.test.ts checks both paths agree). Scoring each match costs FTS5 a read of
 * the entry's size: about nine tenths of such a search.
 *
 * Here the matches split in two:
 * - exceptions: entries with w in `names` (an FTS5 query on that column) or with two or
 *   more `terms` words starting with w (a repeat token starting with w: search-index.ts
 *   rankFacts). They are few in a common prefix of data words; each is scored from its
 *   object's words.
 * - the others hold w once, in `terms`: weight 1, so their rank only grows with their
 *   length. Walking `object_rank_len` in (length, rowid) order gives them best first; the walk
 *   stops once `limit` of them are found and the next one ranks lower.
 * Ranks are FTS5's formula with FTS5's inputs (the averages record, the match count),
 * the same operations in the same order, so the answer is the same, scores included.
 *
 * The path needs the search file to hold exactly the objects' current words (the
 * exceptions are scored from the objects): it runs only when the file has applied every
 * queued entry of the snapshot it reads. Otherwise, with few matches (FTS5 is then as
 * fast), many exceptions or a long walk, it answers null and the caller asks FTS5.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Data } from '../../domain/types.js';
import { columnWords, searchColumns } from './search-index.js';

/** A hit: the object's rowid and its FTS5 rank (lower is better). */
export type RankedHit = [rowid: number, rank: number];

/** Below this many matches FTS5 scores them all about as fast. */
const MIN_MATCHES = 10_000;
/** Exceptions scored one by one at most (past that, FTS5 ranks). */
const MAX_EXCEPTIONS = 2_000;
/** The walk reads at most this many entries per match before giving up. */
const WALK_PER_MATCH = 4;
/** Entries read per step of the walk (the first; later steps read more, up to the most). */
const WALK_STEP = 1_024;
const MAX_WALK_STEP = 16_384;
/** The column weights of the `rank` function (search-file.ts), in column order. */
const NAMES_WEIGHT = 2.0;
const TERMS_WEIGHT = 1.0;

/**
 * FTS5's bm25 (fts5_aux.c fts5Bm25Function) for a query of one phrase: `freq` is the
 * weighted count of the phrase in the entry, `length` its size in tokens. The same
 * double operations in the same order give the same result.
 */
export function bm25Rank(idf: number, avgdl: number, freq: number, length: number): number {
  const k1 = 1.2;
  const b = 0.75;
  let score = 0.0;
  score += idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + (b * length) / avgdl)));
  return -1.0 * score;
}

/** An SQLite varint (also FTS5's) at `at`: its value and where the next begins. */
function varint(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i] ?? 0;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  return [value * 256 + (bytes[at + 8] ?? 0), at + 9];
}

/** FTS5's averages record (row 1 of `object_fts_data`): rows and tokens indexed. */
function averages(record: Uint8Array): { rows: number; tokens: number } {
  const [rows, first] = varint(record, 0);
  let tokens = 0;
  for (let at = first; at < record.length; ) {
    const [size, next] = varint(record, at);
    tokens += size;
    at = next;
  }
  return { rows, tokens };
}

/** Index of the first element of sorted `values` not below `value`. */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The tokens of `text` (a column's indexed text) that start with `token`. */
function countStarting(text: string, token: string): number {
  let n = 0;
  for (const word of columnWords(text)) if (word.startsWith(token)) n++;
  return n;
}

interface Statements {
  applied: Statement<[], number>;
  queued: Statement<[], number | null>;
  numbered: Statement<[], number>;
  matches: Statement<[string], number>;
  matchList: Statement<[string], string>;
  repeats: Statement<[string, string], number>;
  nextLength: Statement<[number, number], number | null>;
  walk: Statement<[number, number, number, number], number>;
  averages: Statement<[], Buffer>;
  ln: Statement<[number], number>;
  objects: Statement<[string], [rowid: number, id: string, label: string | null, data: string]>;
}

/** The ranked path over the store's connection, the search file attached as `search`. */
export class RankedSearch {
  private statements: Statements | null = null;

  /**
   * `minMatches`: below this many matches FTS5 ranks; `walkStep`: entries read by the
   * walk's first step (the defaults suit a server; tests lower them).
   */
  constructor(
    private readonly db: Database,
    private readonly minMatches = MIN_MATCHES,
    private readonly walkStep = WALK_STEP,
  ) {}

  /**
   * The best `limit` hits of the query word `word` in the realm with key `key`, best
   * first (rank, then rowid), or null when FTS5 should rank (see above).
   */
  top(key: number, word: string, limit: number): RankedHit[] | null {
    return this.db.transaction(() => this.topNow(key, word, limit))();
  }

  private prepare(): Statements {
    const db = this.db;
    return {
      applied: db.prepare<[], number>('SELECT applied FROM search.search_state').pluck(),
      queued: db.prepare<[], number | null>('SELECT max(seq) FROM main.search_queue').pluck(),
      numbered: db.prepare<[], number>("SELECT seq FROM main.sqlite_sequence WHERE name = 'search_queue'").pluck(),
      matches: db.prepare<[string], number>('SELECT rowid FROM search.object_fts WHERE object_fts MATCH ?').pluck(),
      // One JSON array rather than a row per match: about a third less time for many.
      matchList: db.prepare<[string], string>('SELECT json_group_array(rowid) FROM search.object_fts WHERE object_fts MATCH ?').pluck(),
      repeats: db.prepare<[string, string], number>('SELECT id FROM search.object_rank_repeat WHERE token >= ? AND token < ?').pluck(),
      nextLength: db.prepare<[number, number], number | null>('SELECT min(len) FROM search.object_rank_len WHERE key = ? AND len > ?').pluck(),
      walk: db
        .prepare<[number, number, number, number], number>('SELECT id FROM search.object_rank_len WHERE key = ? AND len = ? AND id > ? ORDER BY id LIMIT ?')
        .pluck(),
      averages: db.prepare<[], Buffer>('SELECT block FROM search.object_fts_data WHERE id = 1').pluck(),
      ln: db.prepare<[number], number>('SELECT ln(?)').pluck(),
      objects: db
        .prepare<[string], [number, string, string | null, string]>(
          'SELECT o.rowid, o.id, o.label, json(o.data) FROM json_each(?) AS j CROSS JOIN objects o ON o.rowid = j.value',
        )
        .raw(true),
    };
  }

  private topNow(key: number, word: string, limit: number): RankedHit[] | null {
    const s = (this.statements ??= this.prepare());
    // The exceptions are scored from the objects: only when the file holds their words,
    // that is when it applied every entry this snapshot of the database queued (still
    // queued ones, and applied ones dropped), and none that it does not hold yet.
    const applied = s.applied.get() ?? -1;
    if ((s.queued.get() ?? 0) > applied || applied > (s.numbered.get() ?? 0)) return null;
    const token = `${key}x${word}`;
    // Words hold only letters and digits, never a double quote (search-index.ts searchMatch).
    const match = `"${token}"*`;
    // In rowid order, as FTS5 reads them.
    const hits = JSON.parse(s.matchList.get(match) ?? '[]') as number[];
    if (hits.length < Math.max(this.minMatches, 8 * limit)) return null;
    const exceptions = new Set(s.matches.all(`names : ${match}`));
    // A token starting with `token` sorts from `token` up to `token` and the highest
    // character (none a word holds); stale repeat tokens may name entries that no longer
    // match, hence the test.
    for (const id of s.repeats.all(token, `${token}\u{10FFFF}`)) {
      const at = lowerBound(hits, id);
      if (hits[at] === id) exceptions.add(id);
    }
    if (exceptions.size > MAX_EXCEPTIONS) return null;

    const record = s.averages.get();
    if (record === undefined) return null;
    const { rows, tokens } = averages(record);
    const avgdl = tokens / rows;
    // FTS5: log((N - nHit + 0.5) / (nHit + 0.5)), at least 1e-6; SQLite's ln is that log.
    let idf = s.ln.get((rows - hits.length + 0.5) / (hits.length + 0.5)) ?? 0;
    if (idf <= 0.0) idf = 1e-6;

    const ranked: RankedHit[] = [];
    if (exceptions.size > 0) {
      for (const [rowid, id, label, data] of s.objects.all(JSON.stringify([...exceptions]))) {
        const [names, terms] = searchColumns(key, { id, label, location: null, data: JSON.parse(data) as Data, seen: null });
        const inNames = countStarting(names, token);
        const inTerms = countStarting(terms, token);
        if (inNames + inTerms === 0) return null;
        const freq = inNames * NAMES_WEIGHT + inTerms * TERMS_WEIGHT;
        ranked.push([rowid, bm25Rank(idf, avgdl, freq, columnWords(names).length + columnWords(terms).length)]);
      }
      if (ranked.length !== exceptions.size) return null;
    }

    // The others, best first: weight 1, ranked by length.
    const byLength = new Map<number, number>();
    const rankOf = (length: number): number => {
      let rank = byLength.get(length);
      if (rank === undefined) byLength.set(length, (rank = bm25Rank(idf, avgdl, TERMS_WEIGHT, length)));
      return rank;
    };
    let found = 0;
    let kth = Infinity;
    let kthLength = -1;
    let members = 0;
    let walked = 0;
    let complete = true;
    let step = this.walkStep;
    // One length at a time, in rowid order.
    walk: for (let len = s.nextLength.get(key, -1), after = -1; len !== undefined && len !== null; ) {
      const rank = rankOf(len);
      if (found >= limit) {
        // Ranks only grow along the walk: once one ranks below the limit-th, all do.
        if (rank > kth) break;
        // The rest of the limit-th's length ranks the same with later rowids: none is
        // among the best. (Another length may rank the same in doubles: it is walked.)
        if (len === kthLength) {
          complete = false;
          len = s.nextLength.get(key, len);
          after = -1;
          continue;
        }
      }
      const ids = s.walk.all(key, len, after, step);
      walked += ids.length;
      for (const id of ids) {
        const at = lowerBound(hits, id);
        if (hits[at] !== id || exceptions.has(id)) continue;
        members++;
        if (found >= limit && len === kthLength) continue walk;
        ranked.push([id, rank]);
        if (++found === limit) {
          kth = rank;
          kthLength = len;
        }
      }
      if (ids.length < step) {
        len = s.nextLength.get(key, len);
        after = -1;
      } else {
        after = ids[ids.length - 1] ?? -1;
        if (walked > WALK_PER_MATCH * hits.length) return null;
        // Enough entries for the hits still wanted at the density seen so far.
        step = Math.min(MAX_WALK_STEP, Math.ceil(((limit - Math.min(found, limit) + 16) * walked * 1.25) / Math.max(members, 1)));
      }
    }
    // Every entry walked: each match not an exception must have been found.
    if (complete && found < limit && found !== hits.length - exceptions.size) return null;
    ranked.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    return ranked.slice(0, limit);
  }
}
