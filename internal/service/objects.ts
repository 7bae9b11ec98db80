/** Object use cases: validate, write through the store port, shape the answers. */
import { idForbidden, type IdFilter } from '../auth/rights.js';
import { parseId } from '../domain/ids.js';
import {
  parseFields,
  parseFilterParam,
  parseHistoryQuery,
  parsePageQuery,
  parseSearchLimit,
  parseShapeValue,
  rejectUnknownParams,
  type HistoryParams,
} from '../domain/list-query.js';
import { parseBulkBody, parseObjectBody, type FutureLimit } from '../domain/object-input.js';
import { parseSearchQuery } from '../domain/search.js';
import type { ChangeOrigin, Location, ObjectChange, ObjectPatch, Realm, TrackedObject } from '../domain/types.js';
import { LocusError, notFound, toLocusError, unknownObject } from '../errors.js';
import type { HistoryEntry, ObjectListQuery, Page, Store } from '../store/port.js';
import type { ChangeListener } from './changes.js';
import { isoTime, type Clock } from './clock.js';
import { noPresence, type PresenceLookup } from './presence-port.js';
import { objectListEntry, objectView, type ObjectListEntry, type ObjectView } from './views.js';
import { WriteOrder } from './write-order.js';

export interface ObjectLimits {
  maxBulk: number;
  maxPage: number;
  /** Most conditions in one filter (LOCUS_MAX_FILTER_CONDITIONS; default 100). */
  maxFilterConditions?: number;
  /** Most vertices of a polygon shape (LOCUS_MAX_POLYGON_VERTICES; default 10,000). */
  maxVertices?: number;
  /** Most seconds a fix may be dated ahead of the server clock (LOCUS_MAX_FUTURE_SKEW_S; default 300). */
  maxFutureSkewS?: number;
}

/** The last instant ISO 8601 text can hold (normalizeTime's years 0000–9999). */
const LAST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export interface UpsertOptions {
  /** Update only: 404 `unknown object <id>` when the object does not exist (checked by the store in the write). */
  mustExist?: boolean;
  /**
   * Task ids, already validated (domain/object-input.ts parseTasks): v1 `tds`, which the
   * REST body does not carry. Replace the object's; [] clears them.
   */
  tasks?: string[];
  /** An instruction's write: the changes carry it (domain/types.ts ChangeOrigin); absent: a client's. */
  origin?: ChangeOrigin;
}

/** One write of ObjectService.upsertEach: the object's id, its body (REST form), update-only or not, task ids (as UpsertOptions). */
export interface UpsertEntry {
  id: string;
  body: unknown;
  mustExist?: boolean;
  tasks?: string[];
}

export interface ObjectPage {
  entries: ObjectListEntry[];
  next: string | null;
}

/** A search answer: best match first; `score` is higher for better matches. */
export interface SearchResult {
  entries: (ObjectListEntry & { score: number })[];
}

/** A page of an object's location history. */
export interface HistoryPage {
  id: string;
  locations: Location[];
  next: string | null;
}

/** The most full-text candidates a filtered search (readable) looks at. */
const MAX_FILTERED_CANDIDATES = 10_000;

const listParams = ['fields', 'filter', 'shape', 'limit', 'cursor'] as const;
const searchParams = ['q', 'limit'] as const;
const historyParams = ['from', 'to', 'limit', 'cursor', 'order'] as const;

export class ObjectService {
  /** The future limit of the last clock reading (isoTime's reason: many writes share a millisecond). */
  private future: { nowMs: number; limit: FutureLimit } | null = null;
  /** Writes of one object apply in arrival order; of different objects, concurrently (write-order.ts). */
  private readonly order = new WriteOrder();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: ObjectLimits,
    private readonly listener: ChangeListener,
    /** Where connectionStatus comes from (compat 6): the presence registry; none: every object `dis`. */
    private readonly presence: PresenceLookup = noPresence,
  ) {}

  /**
   * Creates or updates one object. Writes of the same object apply in the order they are
   * called, settled or not (WriteOrder); the v1 dispatcher's `ordered` actions rely on it.
   */
  async upsert(realm: Realm, id: string, body: unknown, options?: UpsertOptions): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const nowMs = this.clock();
    const now = isoTime(nowMs);
    const patch = parseObjectBody(body, objectId, now, this.futureLimit(nowMs));
    if (options?.mustExist === true) patch.mustExist = true;
    if (options?.tasks !== undefined) patch.tasks = options.tasks;
    const changes = await this.write(realm.id, [objectId], [patch], now, options?.origin);
    const [change] = changes;
    if (change === undefined) {
      if (patch.mustExist === true) throw unknownObject(objectId);
      throw new Error('store returned no change for a single upsert');
    }
    return change;
  }

  /**
   * Writes `patches` (of the objects `ids`) once earlier writes of those objects have
   * settled, then hands the changes to the listener: in write order per object. `origin`
   * marks the changes of an instruction's write.
   */
  private write(realm: string, ids: readonly string[], patches: ObjectPatch[], now: string, origin?: ChangeOrigin): Promise<ObjectChange[]> {
    return this.order.run(realm, ids, () =>
      this.store.objects.upsertMany(realm, patches, now).then((changes) => {
        if (origin !== undefined) for (const change of changes) change.origin = origin;
        if (changes.length > 0) this.listener.objectsChanged(realm, changes);
        return changes;
      }),
    );
  }

  /**
   * Creates or updates a batch atomically; returns the number of entries and one change per id.
   * `writable` (auth/rights.ts idFilter with U; null: every id): an entry whose id fails it
   * refuses the whole batch with 403, and nothing is written.
   */
  async bulk(realm: Realm, body: unknown, writable: IdFilter | null = null): Promise<{ count: number; changes: ObjectChange[] }> {
    const nowMs = this.clock();
    const now = isoTime(nowMs);
    const patches = parseBulkBody(body, now, this.limits.maxBulk, this.futureLimit(nowMs));
    if (writable !== null) {
      const refused = patches.find((patch) => !writable(patch.id));
      if (refused !== undefined) throw idForbidden('U', refused.id);
    }
    const changes = patches.length === 0 ? [] : await this.write(realm.id, idsOf(patches), patches, now);
    return { count: patches.length, changes };
  }

  /** The latest fix time accepted at `nowMs`. */
  private futureLimit(nowMs: number): FutureLimit {
    if (this.future?.nowMs === nowMs) return this.future.limit;
    const skewS = this.limits.maxFutureSkewS ?? 300;
    const latest = new Date(Math.min(nowMs + skewS * 1000, LAST_INSTANT_MS)).toISOString();
    this.future = { nowMs, limit: { latest, skewS } };
    return this.future.limit;
  }

  async get(realm: Realm, id: string): Promise<ObjectView> {
    const objectId = parseId(id, 'object');
    const obj = await this.store.objects.get(realm.id, objectId);
    if (obj === null) throw notFound(`object ${objectId} not found`);
    return objectView(obj, this.presence.statusOf(realm.id, obj.id));
  }

  /**
   * Lists a page of objects; params come from a query string or a v1 payload:
   * fields, filter (the filter grammar), shape (JSON text, or in v1 also the shape
   * object itself), limit, cursor. All are applied together by the store. `readable`
   * (auth/rights.ts readFilter; null: every object) keeps the objects the caller may read:
   * such a page may hold fewer than `limit` entries (even none) while `next` goes on.
   */
  async list(realm: Realm, params: Record<string, unknown>, readable: IdFilter | null = null): Promise<ObjectPage> {
    rejectUnknownParams(params, listParams);
    const fields = parseFields(params.fields);
    const filter = parseFilterParam(params.filter, this.limits.maxFilterConditions ?? 100);
    const shape = parseShapeValue(params.shape, this.limits.maxVertices ?? 10_000);
    // Entries show id, label, connectionStatus (from presence) and the named fields only.
    const query: ObjectListQuery = { ...parsePageQuery(params, this.limits), fields };
    if (filter.length > 0) query.filter = filter;
    if (shape !== undefined) query.shape = shape;
    const page = await this.store.objects.list(realm.id, query);
    const items = readable === null ? page.items : page.items.filter((obj) => readable(obj.id));
    return {
      entries: items.map((obj) => objectListEntry(obj, fields, this.presence.statusOf(realm.id, obj.id))),
      next: page.next,
    };
  }

  /**
   * Full-text search (params q, limit): best match first, each entry with its score.
   * `readable` (readFilter; null: every object): only the objects the caller may read, still
   * up to `limit` of them (the store is asked for more candidates while some were dropped).
   */
  async search(realm: Realm, params: Record<string, unknown>, readable: IdFilter | null = null): Promise<SearchResult> {
    rejectUnknownParams(params, searchParams);
    const words = parseSearchQuery(params.q);
    const limit = parseSearchLimit(params.limit, this.limits.maxPage);
    let hits = await this.store.objects.search(realm.id, { words, limit, fields: null });
    if (readable !== null) {
      let asked = limit;
      let kept = hits.filter((hit) => readable(hit.object.id));
      // Dropped candidates leave room: ask again for more, up to MAX_FILTERED_CANDIDATES.
      while (kept.length < limit && hits.length === asked && asked < MAX_FILTERED_CANDIDATES) {
        asked = Math.min(MAX_FILTERED_CANDIDATES, asked * 4);
        hits = await this.store.objects.search(realm.id, { words, limit: asked, fields: null });
        kept = hits.filter((hit) => readable(hit.object.id));
      }
      hits = kept.slice(0, limit);
    }
    return {
      entries: hits.map((hit) => ({
        ...objectListEntry(hit.object, null, this.presence.statusOf(realm.id, hit.object.id)),
        score: hit.score,
      })),
    };
  }

  /** A page of an object's stored fixes (params from, to, limit, cursor, order); 404 when the object does not exist. */
  async history(realm: Realm, id: string, params: Record<string, unknown>): Promise<HistoryPage> {
    const objectId = parseId(id, 'object');
    rejectUnknownParams(params, historyParams);
    const query = parseHistoryQuery(params, this.limits);
    if ((await this.store.objects.get(realm.id, objectId)) === null) throw notFound(`object ${objectId} not found`);
    const page = await this.store.objects.history(realm.id, objectId, query);
    return { id: objectId, locations: page.items.map((entry) => entry.location), next: page.next };
  }

  /**
   * A page of an object's history entries (fix, label and data after that write), for
   * Hivekit's forms: v1 `his rea` and `GET /v2/realm/<r>/history/<id>`. `missing`: what an
   * unknown object gives, an empty page (v1, hivekit-compat.md 7.1) or 404 `unknown object <id>`.
   */
  async historyEntries(realm: Realm, id: string, query: HistoryParams, missing: 'empty' | 'not_found'): Promise<Page<HistoryEntry>> {
    const objectId = parseId(id, 'object');
    const page = await this.store.objects.history(realm.id, objectId, query);
    if (page.items.length === 0 && missing === 'not_found' && (await this.store.objects.get(realm.id, objectId)) === null) {
      throw notFound(`unknown object ${objectId}`);
    }
    return page;
  }

  /**
   * Deletes an object; `missing` is the error when it does not exist (v1 says `unknown object <id>`).
   * `origin` marks an instruction's delete.
   */
  async delete(
    realm: Realm,
    id: string,
    missing: (id: string) => LocusError = (objectId) => notFound(`object ${objectId} not found`),
    origin?: ChangeOrigin,
  ): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const now = isoTime(this.clock());
    const change = await this.order.run(realm.id, [objectId], async () => {
      const deleted = await this.store.objects.delete(realm.id, objectId, now);
      if (deleted !== null && origin !== undefined) deleted.origin = origin;
      if (deleted !== null) this.listener.objectsChanged(realm.id, [deleted]);
      return deleted;
    });
    if (change === null) throw missing(objectId);
    return change;
  }

  /**
   * Several independent writes in one store call (v1 frames of `obj` writes): each entry is
   * validated on its own (an invalid one is its own error and is not written), the others go
   * to the store together; an entry with `mustExist` whose object does not exist is 404
   * `unknown object <id>`. Ids must be distinct (the caller's rule): each write's change is
   * then exactly what it would be alone. Ordered per object as upsert. One result per entry,
   * in order; a failure of the store call fails every entry.
   */
  async upsertEach(realm: Realm, entries: readonly UpsertEntry[]): Promise<(ObjectChange | LocusError)[]> {
    const nowMs = this.clock();
    const now = isoTime(nowMs);
    const future = this.futureLimit(nowMs);
    const results: (ObjectChange | LocusError | ObjectPatch)[] = entries.map((entry) => {
      try {
        const patch = parseObjectBody(entry.body, parseId(entry.id, 'object'), now, future);
        if (entry.mustExist === true) patch.mustExist = true;
        if (entry.tasks !== undefined) patch.tasks = entry.tasks;
        return patch;
      } catch (err) {
        return toLocusError(err);
      }
    });
    const patches = results.filter((result): result is ObjectPatch => !(result instanceof LocusError));
    const changes = patches.length === 0 ? [] : await this.write(realm.id, idsOf(patches), patches, now);
    const byId = new Map(changes.map((change) => [change.id, change]));
    return results.map((result) => {
      if (result instanceof LocusError) return result;
      return byId.get(result.id) ?? unknownObject(result.id);
    });
  }

  /** The object as stored (v1 `obj rea`); 404 `unknown object <id>`. */
  async read(realm: Realm, id: string): Promise<TrackedObject> {
    const objectId = parseId(id, 'object');
    const obj = await this.store.objects.get(realm.id, objectId);
    if (obj === null) throw unknownObject(objectId);
    return obj;
  }

  /** A page of objects as stored, for a query already parsed (v1 `obj lis`); `readable` as in list. */
  async page(realm: Realm, query: ObjectListQuery, readable: IdFilter | null = null): Promise<Page<TrackedObject>> {
    const page = await this.store.objects.list(realm.id, query);
    return readable === null ? page : { items: page.items.filter((obj) => readable(obj.id)), next: page.next };
  }
}

/** The object ids of a batch (repeats included: WriteOrder takes them once). */
function idsOf(patches: readonly ObjectPatch[]): string[] {
  const ids = new Array<string>(patches.length);
  for (let i = 0; i < patches.length; i++) ids[i] = (patches[i] as ObjectPatch).id;
  return ids;
}
