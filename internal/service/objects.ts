/** Object use cases: validate, write through the store port, shape the answers. */
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
import type { Location, ObjectChange, Realm } from '../domain/types.js';
import { notFound } from '../errors.js';
import type { HistoryEntry, ObjectListQuery, Page, Store } from '../store/port.js';
import type { ChangeListener } from './changes.js';
import { isoTime, type Clock } from './clock.js';
import { objectListEntry, objectView, type ObjectListEntry, type ObjectView } from './views.js';

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

const listParams = ['fields', 'filter', 'shape', 'limit', 'cursor'] as const;
const searchParams = ['q', 'limit'] as const;
const historyParams = ['from', 'to', 'limit', 'cursor', 'order'] as const;

export class ObjectService {
  /** The future limit of the last clock reading (isoTime's reason: many writes share a millisecond). */
  private future: { nowMs: number; limit: FutureLimit } | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: ObjectLimits,
    private readonly listener: ChangeListener,
  ) {}

  /**
   * Creates or updates one object. Like bulk, it calls the store before its first await:
   * calls made one after the other write in that order, settled or not (the v1
   * dispatcher's `ordered` actions rely on it).
   */
  async upsert(realm: Realm, id: string, body: unknown): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const nowMs = this.clock();
    const now = isoTime(nowMs);
    const patch = parseObjectBody(body, objectId, now, this.futureLimit(nowMs));
    const changes = await this.store.objects.upsertMany(realm.id, [patch], now);
    const [change] = changes;
    if (change === undefined) throw new Error('store returned no change for a single upsert');
    this.listener.objectsChanged(realm.id, changes);
    return change;
  }

  /** Creates or updates a batch atomically; returns the number of entries and one change per id. */
  async bulk(realm: Realm, body: unknown): Promise<{ count: number; changes: ObjectChange[] }> {
    const nowMs = this.clock();
    const now = isoTime(nowMs);
    const patches = parseBulkBody(body, now, this.limits.maxBulk, this.futureLimit(nowMs));
    const changes = patches.length === 0 ? [] : await this.store.objects.upsertMany(realm.id, patches, now);
    if (changes.length > 0) this.listener.objectsChanged(realm.id, changes);
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
    return objectView(obj, this.clock(), realm.settings.connectionTimeout);
  }

  /**
   * Lists a page of objects; params come from a query string or a v1 payload:
   * fields, filter (the filter grammar), shape (JSON text, or in v1 also the shape
   * object itself), limit, cursor. All are applied together by the store.
   */
  async list(realm: Realm, params: Record<string, unknown>): Promise<ObjectPage> {
    rejectUnknownParams(params, listParams);
    const fields = parseFields(params.fields);
    const filter = parseFilterParam(params.filter, this.limits.maxFilterConditions ?? 100);
    const shape = parseShapeValue(params.shape, this.limits.maxVertices ?? 10_000);
    // Entries show id, label, connectionStatus (from seen) and the named fields only.
    const query: ObjectListQuery = { ...parsePageQuery(params, this.limits), fields };
    if (filter.length > 0) query.filter = filter;
    if (shape !== undefined) query.shape = shape;
    const page = await this.store.objects.list(realm.id, query);
    const nowMs = this.clock();
    return {
      entries: page.items.map((obj) => objectListEntry(obj, fields, nowMs, realm.settings.connectionTimeout)),
      next: page.next,
    };
  }

  /** Full-text search (params q, limit): best match first, each entry with its score. */
  async search(realm: Realm, params: Record<string, unknown>): Promise<SearchResult> {
    rejectUnknownParams(params, searchParams);
    const words = parseSearchQuery(params.q);
    const limit = parseSearchLimit(params.limit, this.limits.maxPage);
    const hits = await this.store.objects.search(realm.id, { words, limit, fields: null });
    const nowMs = this.clock();
    return {
      entries: hits.map((hit) => ({
        ...objectListEntry(hit.object, null, nowMs, realm.settings.connectionTimeout),
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

  async delete(realm: Realm, id: string): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const change = await this.store.objects.delete(realm.id, objectId, isoTime(this.clock()));
    if (change === null) throw notFound(`object ${objectId} not found`);
    this.listener.objectsChanged(realm.id, [change]);
    return change;
  }
}
