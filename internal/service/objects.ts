/** Object use cases: validate, write through the store port, shape the answers. */
import { parseId } from '../domain/ids.js';
import { parseFields, parsePageQuery, rejectUnknownParams } from '../domain/list-query.js';
import { parseBulkBody, parseObjectBody } from '../domain/object-input.js';
import type { ObjectChange, Realm } from '../domain/types.js';
import { invalid, notFound } from '../errors.js';
import type { Store } from '../store/port.js';
import { isoTime, type Clock } from './clock.js';
import { objectListEntry, objectView, type ObjectListEntry, type ObjectView } from './views.js';

export interface ObjectLimits {
  maxBulk: number;
  maxPage: number;
}

export interface ObjectPage {
  entries: ObjectListEntry[];
  next: string | null;
}

const listParams = ['fields', 'filter', 'shape', 'limit', 'cursor'] as const;

export class ObjectService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: ObjectLimits,
  ) {}

  /** Creates or updates one object. */
  async upsert(realm: Realm, id: string, body: unknown): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const now = isoTime(this.clock());
    const patch = parseObjectBody(body, objectId, now);
    const [change] = await this.store.objects.upsertMany(realm.id, [patch], now);
    if (change === undefined) throw new Error('store returned no change for a single upsert');
    return change;
  }

  /** Creates or updates a batch atomically; returns the number of entries and one change per id. */
  async bulk(realm: Realm, body: unknown): Promise<{ count: number; changes: ObjectChange[] }> {
    const now = isoTime(this.clock());
    const patches = parseBulkBody(body, now, this.limits.maxBulk);
    const changes = patches.length === 0 ? [] : await this.store.objects.upsertMany(realm.id, patches, now);
    return { count: patches.length, changes };
  }

  async get(realm: Realm, id: string): Promise<ObjectView> {
    const objectId = parseId(id, 'object');
    const obj = await this.store.objects.get(realm.id, objectId);
    if (obj === null) throw notFound(`object ${objectId} not found`);
    return objectView(obj, this.clock(), realm.settings.connectionTimeout);
  }

  /** Lists a page of objects; params come from a query string or a v1 payload. */
  async list(realm: Realm, params: Record<string, unknown>): Promise<ObjectPage> {
    rejectUnknownParams(params, listParams);
    // Filters and shapes are parsed and pushed down by the query engine (issue #3);
    // until then they are refused rather than ignored.
    if (params.filter !== undefined && params.filter !== '') {
      throw invalid('filter is not supported by this server version', 'invalid_filter');
    }
    if (params.shape !== undefined && params.shape !== '') {
      throw invalid('shape is not supported by this server version', 'invalid_shape');
    }
    const fields = parseFields(params.fields);
    const page = await this.store.objects.list(realm.id, parsePageQuery(params, this.limits));
    const nowMs = this.clock();
    return {
      entries: page.items.map((obj) => objectListEntry(obj, fields, nowMs, realm.settings.connectionTimeout)),
      next: page.next,
    };
  }

  async delete(realm: Realm, id: string): Promise<ObjectChange> {
    const objectId = parseId(id, 'object');
    const change = await this.store.objects.delete(realm.id, objectId, isoTime(this.clock()));
    if (change === null) throw notFound(`object ${objectId} not found`);
    return change;
  }
}
