/**
 * Reads of objects: one object, pages of a list (filters and shapes pushed down to the
 * indexes) and full-text search.
 *
 * Indexes: the (realm, id) unique index serves id order and paging; the FTS5 table
 * `object_fts` in the search file serves search (search-indexer.ts keeps it current); the
 * spatial index is in memory (location-index.ts: a grid of current locations per realm).
 *
 * A shape query first finds its hits in the grid: the points in the cells of the
 * shape's boxes (queryBoxes: shapeBounds, a polygon's box cut into slabs) that pass the
 * exact test of internal/geo (compileShape). Then one SQL statement in one of two plans:
 * - spatial: the hits' rows, by rowid, filtered (realm, id range, filter) and sorted by
 *   id. Best when the shape holds few objects, which is every shape that is small next
 *   to the realm.
 * - ordered: the (realm, id) index in id order, rows whose lon/lat fall in a box and pass
 *   the same exact test (run inside the statement as the SQL function locus_inside),
 *   filtered. Best when the shape holds a large share of the realm: the page fills after
 *   about limit / share rows, and nothing is sorted.
 * The count of hits, capped, picks the plan (see spatialCandidateCap).
 */
import type { Database, Statement } from 'better-sqlite3';
import { compareCodePoints } from '../../domain/filter.js';
import type { BBox, Data, FilterCondition, TrackedObject } from '../../domain/types.js';
import { compileShape, type PointTest } from '../../geo/contains.js';
import type { ObjectListQuery, Page, SearchHit, SearchQuery } from '../port.js';
import { compileFilter, dataPath } from './filter-sql.js';
import { indexableField, indexTerm, type FilterIndexes } from './filter-indexes.js';
import type { LocationIndex } from './location-index.js';
import { checkLimit, emptyPage, pageStart, toPage } from '../pages.js';
import { queryBoxes } from './query-boxes.js';
import { OBJECT_TUPLE_COLUMNS, objectFromRow, objectFromTuple, type ObjectRow, type ObjectTuple } from './rows.js';
import { searchMatch } from './search-index.js';
import type { SearchIndexer } from './search-indexer.js';

/**
 * The spatial plan is used while the shape holds fewer hits than this (counted up to the
 * cap). Its cost grows with the hits (each row is read, filtered and sorted: a few µs
 * each at a million objects); the ordered plan's with the rows it walks, about limit ×
 * (objects in the realm) / hits. The two meet near √(limit × realm size) hits, tens of
 * thousands for a million-object realm; this fixed cap approximates that without
 * counting the realm.
 */
export function spatialCandidateCap(limit: number): number {
  return Math.max(5_000, 20 * (limit + 1));
}

export type ListPlan = 'index' | 'spatial' | 'ordered' | 'filter-index';

/** Statements of one SQL text are prepared once and kept (queries differ by their filter's form). */
const STATEMENT_CACHE_SIZE = 256;

/** `objects.data` is JSONB (schema.ts version 5); json() gives back the JSON text written. `tasks`: JSON text or NULL (version 14). */
const OBJECT_COLUMNS = 'o.rowid, o.id, o.label, o.lon, o.lat, o.loc_extra, o.loc_time, o.seen, json(o.data), o.tasks';

/**
 * The columns a list reads: whole objects, or (with a projection) what the projection needs:
 * with named fields, only their values, read from the JSONB as a JSON array (`->` keeps
 * each value's JSON type; null for an absent key, which data never holds otherwise), not
 * the whole data as text to parse and cut in JavaScript (a combined query of 560 objects:
 * about 1 ms less). Its parameters (projectionParams) come first in the statement.
 */
function listColumns(fields: string[] | null | undefined): string {
  if (fields === undefined) return OBJECT_COLUMNS;
  // No task ids either (a projection shows none): NULL in their column.
  const base = 'o.rowid, o.id, o.label, NULL, NULL, NULL, NULL, o.seen';
  if (fields === null || fields.length === 0) return `${base}, NULL, NULL`;
  return `${base}, json_array(${fields.map(() => 'o.data -> ?').join(', ')}), NULL`;
}

/** The parameters of listColumns: the JSON path of each named field. */
function projectionParams(fields: string[] | null | undefined): string[] {
  return fields === undefined || fields === null ? [] : fields.map(dataPath);
}

/** Converts a list row; with a projection, data keeps only the named fields (in their order). */
function projector(fields: string[] | null | undefined): (row: ObjectTuple) => TrackedObject {
  if (fields === undefined) return objectFromTuple;
  // No data (fields null or empty): nothing to parse.
  if (fields === null || fields.length === 0) return (row) => ({ id: row[1], label: row[2], location: null, data: {}, seen: row[7] });
  return (row) => {
    const values = JSON.parse(row[8]) as (Data[string] | null)[];
    const kept: [string, Data[string]][] = [];
    fields.forEach((field, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) kept.push([field, value]);
    });
    // Object.fromEntries defines each key as an own property (`__proto__` included).
    return { id: row[1], label: row[2], location: null, data: Object.fromEntries(kept), seen: row[7] };
  };
}

/** The SQL term of the exact test (a function registered by ObjectReads). */
const INSIDE = 'locus_inside(o.lon, o.lat)';
const outside: PointTest = () => false;
const tupleId = (row: ObjectTuple): string => row[1];

/** `o.lon`/`o.lat` inside one of the boxes (exact doubles: the boxes cover every accepted point). */
function boxesSql(boxes: readonly BBox[], params: (string | number)[]): string {
  const parts = boxes.map((box) => {
    params.push(box.minLon, box.maxLon, box.minLat, box.maxLat);
    return '(o.lon BETWEEN ? AND ? AND o.lat BETWEEN ? AND ?)';
  });
  return `(${parts.join(' OR ')})`;
}

export interface PlannedList {
  sql: string;
  params: (string | number)[];
  plan: ListPlan;
}

export class ObjectReads {
  private readonly statements = new Map<string, Statement>();
  private readonly selectObject: Statement<[string, string], ObjectRow>;
  private readonly selectKey: Statement<[string], number>;
  private readonly listTx: (realm: string, query: ObjectListQuery) => Page<TrackedObject>;
  /** The exact test of the shape query being answered (see listNow). */
  private inside: PointTest = outside;

  constructor(
    private readonly db: Database,
    private readonly indexer: SearchIndexer,
    private readonly locations: LocationIndex,
    private readonly spatialCap: (limit: number) => number,
    private readonly filterIndexes: FilterIndexes,
  ) {
    // internal/geo decides "inside", called from SQL so that only hits are sorted and read.
    db.function('locus_inside', { deterministic: false }, (lon: unknown, lat: unknown) =>
      typeof lon === 'number' && typeof lat === 'number' && this.inside(lon, lat) ? 1 : 0,
    );
    // A read of the object alone (GET): not its held past fixes.
    this.selectObject = db.prepare('SELECT rowid, id, label, lon, lat, loc_extra, loc_time, seen, json(data) AS data, tasks FROM objects WHERE realm = ? AND id = ?');
    this.selectKey = db.prepare<[string], number>('SELECT key FROM realm_keys WHERE realm = ?').pluck();
    // One read transaction: a shape query reads candidates, then the hits' rows.
    this.listTx = db.transaction((realm: string, query: ObjectListQuery) => this.listNow(realm, query));
  }

  /** The row of one object (as GET reads it), or undefined. */
  row(realm: string, id: string): ObjectRow | undefined {
    return this.selectObject.get(realm, id);
  }

  get(realm: string, id: string): TrackedObject | null {
    const row = this.selectObject.get(realm, id);
    return row === undefined ? null : objectFromRow(row);
  }

  list(realm: string, query: ObjectListQuery): Page<TrackedObject> {
    return this.listTx(realm, query);
  }

  /** The SQL (with its parameters) and plan of a list query; null when it can match nothing. */
  plan(realm: string, query: ObjectListQuery): PlannedList | null {
    const after = pageStart(query);
    const filter = compileFilter(query.filter ?? []);
    if (filter.never) return null;
    let lower = after;
    if (filter.idAfter !== null && compareCodePoints(filter.idAfter, lower) > 0) lower = filter.idAfter;
    const upper = filter.idBefore;
    if (upper !== null && compareCodePoints(lower, upper) >= 0) return null;

    const params: (string | number)[] = [];
    const where = (exact?: string): string => {
      const terms = ['o.realm = ?', 'o.id > ?'];
      params.push(realm, lower);
      if (upper !== null) {
        terms.push('o.id < ?');
        params.push(upper);
      }
      // The exact test before the filter: cheaper than JSON extraction.
      if (exact !== undefined) terms.push(exact);
      terms.push(...filter.terms);
      params.push(...filter.params);
      return terms.join(' AND ');
    };
    const planned = (sql: string, plan: ListPlan): PlannedList => {
      params.push(query.limit + 1);
      return { sql, params: [...projectionParams(query.fields), ...params], plan };
    };

    if (query.shape === undefined) {
      const indexed = this.filterIndexPlan(realm, query, lower, upper);
      if (indexed !== null) return indexed;
      return planned(`SELECT ${listColumns(query.fields)} FROM objects o WHERE ${where()} ORDER BY o.id LIMIT ?`, 'index');
    }

    // The hits in the shape (the exact test on the grid's locations), up to the cap.
    const boxes = queryBoxes(query.shape);
    const inside = compileShape(query.shape);
    const cap = Math.max(1, Math.floor(this.spatialCap(query.limit)));
    const hits: number[] = [];
    this.locations.grid(realm).visit(boxes, (rowid, lon, lat) => {
      if (inside(lon, lat)) hits.push(rowid);
      return hits.length >= cap;
    });
    if (hits.length === 0) return null;

    if (hits.length < cap) {
      // Spatial plan: the hits drive (CROSS JOIN keeps them the outer loop), in rowid
      // order, the order of the table's pages: about 7% faster than the grid's order.
      hits.sort((a, b) => a - b);
      params.push(JSON.stringify(hits));
      const sql = `SELECT ${listColumns(query.fields)} FROM json_each(?) AS c CROSS JOIN objects o ON o.rowid = c.value WHERE ${where()} ORDER BY o.id LIMIT ?`;
      return planned(sql, 'spatial');
    }
    // Ordered plan: the (realm, id) index drives; lon/lat prefiltered by the boxes.
    const boxTerm = boxesSql(boxes, params);
    return planned(`SELECT ${listColumns(query.fields)} FROM objects o WHERE ${boxTerm} AND ${where(INSIDE)} ORDER BY o.id LIMIT ?`, 'ordered');
  }

  /**
   * The filter-index plan of a list without a shape, when it is the cheaper one: the
   * realm has filter indexes (filter-indexes.ts) on fields of the filter's conditions, and
   * the most selective of those conditions holds for fewer rows (past the page start)
   * than the cap. Each candidate condition's rows are counted in its index, up to the cap
   * (a covering index: no row is read). The chosen index then gives its rows' ids, which
   * are filtered by the other conditions, sorted and cut to the page before any other
   * column is read. Past the cap the id-ordered scan is cheaper: it stops once the page is
   * full, after about limit / share rows (the same trade as the spatial plan's,
   * spatialCandidateCap). Null: use the scan.
   */
  private filterIndexPlan(realm: string, query: ObjectListQuery, lower: string, upper: string | null): PlannedList | null {
    const conditions = query.filter ?? [];
    if (conditions.length === 0) return null;
    const indexes = this.filterIndexes.of(realm);
    if (indexes === undefined) return null;
    const cap = Math.max(1, Math.floor(this.spatialCap(query.limit)));
    const realmSql = `'${realm.replace(/'/g, "''")}'`;
    const idRange = (params: (string | number)[]): string => {
      params.push(lower);
      if (upper === null) return 'o.id > ?';
      params.push(upper);
      return 'o.id > ? AND o.id < ?';
    };
    let chosen: { at: number; name: string; count: number } | null = null;
    for (const [at, condition] of conditions.entries()) {
      const field = indexableField(condition);
      const name = field === null ? undefined : indexes.get(field);
      if (name === undefined) continue;
      const params: (string | number)[] = [];
      const term = indexTerm(condition, params);
      const range = idRange(params);
      const sql = `SELECT count(*) FROM (SELECT 1 FROM objects o INDEXED BY "${name}" WHERE o.realm = ${realmSql} AND ${term} AND ${range} LIMIT ?)`;
      const count = this.statement<[number]>(sql).get(...params, cap)?.[0] ?? cap;
      if (count < cap && (chosen === null || count < chosen.count)) chosen = { at, name, count };
      if (count === 0) break;
    }
    if (chosen === null) return null;
    const params: (string | number)[] = [];
    const term = indexTerm(conditions[chosen.at] as FilterCondition, params);
    const range = idRange(params);
    const skip = chosen.at;
    const rest = compileFilter(conditions.filter((_, at) => at !== skip));
    params.push(...rest.params, query.limit + 1);
    const where = [`o.realm = ${realmSql}`, term, range, ...rest.terms].join(' AND ');
    // The inner query reads only the index (and the rows the other conditions test); the
    // outer one reads the page's rows.
    const ids = `SELECT o.rowid AS r FROM objects o INDEXED BY "${chosen.name}" WHERE ${where} ORDER BY o.id LIMIT ?`;
    const sql = `SELECT ${listColumns(query.fields)} FROM (${ids}) AS c CROSS JOIN objects o ON o.rowid = c.r ORDER BY o.id`;
    return { sql, params: [...projectionParams(query.fields), ...params], plan: 'filter-index' };
  }

  private listNow(realm: string, query: ObjectListQuery): Page<TrackedObject> {
    const planned = this.plan(realm, query);
    if (planned === null) return emptyPage();
    const statement = this.statement<ObjectTuple>(planned.sql);
    const convert = projector(query.fields);
    if (query.shape === undefined) return toPage(statement.all(...planned.params), query.limit, convert, tupleId);
    // The statement calls locus_inside(lon, lat), this shape's exact test, on each
    // candidate (better-sqlite3 is synchronous: no other query runs meanwhile).
    this.inside = compileShape(query.shape);
    try {
      return toPage(statement.all(...planned.params), query.limit, convert, tupleId);
    } finally {
      this.inside = outside;
    }
  }

  /** Checks the query; false when it can find nothing (no words). */
  searchable(query: SearchQuery): boolean {
    checkLimit(query.limit);
    return query.words.length > 0;
  }

  /** A search, once the index holds every write made before it (the caller waits for that). */
  search(realm: string, query: SearchQuery): SearchHit[] {
    const key = this.selectKey.get(realm);
    if (key === undefined) return [];
    this.indexer.attach();
    // FTS5 ranks (rank = bm25(2.0, 1.0), set by search-file.ts: lower is better, id and
    // label words weigh twice as much as data words) and keeps the best `limit` before
    // any object row is read; equal ranks then follow id order.
    const rows = this.statement<ObjectTuple>(
      `SELECT ${listColumns(query.fields)}, f.rank AS bm25
         FROM (SELECT rowid, rank FROM search.object_fts WHERE object_fts MATCH ? ORDER BY rank LIMIT ?) AS f
         CROSS JOIN objects o ON o.rowid = f.rowid
         WHERE o.realm = ? ORDER BY f.rank, o.id`,
    ).all(...projectionParams(query.fields), searchMatch(key, query.words), query.limit, realm);
    // Reported as higher-is-better; + 0 turns a -0 into 0.
    const convert = projector(query.fields);
    // The rank is the column after the object's.
    return rows.map((row) => ({ object: convert(row), score: -(row[OBJECT_TUPLE_COLUMNS] as number) + 0 }));
  }

  /** A prepared statement for `sql` whose rows are arrays, from the cache. */
  private statement<R>(sql: string): Statement<unknown[], R> {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
      statement = this.db.prepare(sql).raw(true);
      this.statements.set(sql, statement);
    }
    return statement as Statement<unknown[], R>;
  }
}
