/** Area use cases. */
import type { IdFilter } from '../auth/rights.js';
import { parseAreaCreate, parseAreaPatch, type AreaCreateRules } from '../domain/area-input.js';
import { parseId } from '../domain/ids.js';
import { parsePageQuery, rejectUnknownParams } from '../domain/list-query.js';
import type { AreaChange, ChangeOrigin, Realm } from '../domain/types.js';
import { notFound } from '../errors.js';
import type { Store } from '../store/port.js';
import type { ChangeListener } from './changes.js';
import { noAnnouncer, type ControlAnnouncer } from './control.js';
import { areaListEntry, areaView, type AreaListEntry, type AreaView } from './views.js';

export interface AreaLimits {
  maxPage: number;
  maxVertices: number;
}

export class AreaService {
  constructor(
    private readonly store: Store,
    private readonly limits: AreaLimits,
    private readonly listener: ChangeListener,
    /** Where area changes are announced to every process's geofence indexes. */
    private readonly control: ControlAnnouncer = noAnnouncer,
  ) {}

  /** 409 when the id exists. */
  async create(realm: Realm, id: string, body: unknown, rules?: AreaCreateRules): Promise<AreaChange> {
    const areaId = parseId(id, 'area');
    const change = await this.store.areas.create(realm.id, parseAreaCreate(areaId, body, this.limits.maxVertices, rules));
    this.listener.areaChanged(realm.id, change);
    this.control.announce({ kind: 'areas.changed', realm: realm.id });
    return change;
  }

  /** Partial update; 404 when missing. `origin` marks an instruction's write. */
  async update(realm: Realm, id: string, body: unknown, origin?: ChangeOrigin): Promise<AreaChange> {
    const areaId = parseId(id, 'area');
    const change = await this.store.areas.update(realm.id, areaId, parseAreaPatch(areaId, body, this.limits.maxVertices));
    if (origin !== undefined) change.origin = origin;
    this.listener.areaChanged(realm.id, change);
    this.control.announce({ kind: 'areas.changed', realm: realm.id });
    return change;
  }

  async get(realm: Realm, id: string): Promise<AreaView> {
    const areaId = parseId(id, 'area');
    const area = await this.store.areas.get(realm.id, areaId);
    if (area === null) throw notFound(`area ${areaId} not found`);
    return areaView(area);
  }

  /**
   * A page of areas (params limit, cursor). `readable` (auth/rights.ts readFilter; null: every
   * area) keeps the areas the caller may read: such a page may hold fewer than `limit`
   * entries (even none) while `next` goes on.
   */
  async list(realm: Realm, params: Record<string, unknown>, readable: IdFilter | null = null): Promise<{ entries: AreaListEntry[]; next: string | null }> {
    rejectUnknownParams(params, ['limit', 'cursor']);
    const page = await this.store.areas.list(realm.id, parsePageQuery(params, this.limits));
    const items = readable === null ? page.items : page.items.filter((area) => readable(area.id));
    return { entries: items.map(areaListEntry), next: page.next };
  }

  /** `origin` marks an instruction's delete. */
  async delete(realm: Realm, id: string, origin?: ChangeOrigin): Promise<AreaChange> {
    const areaId = parseId(id, 'area');
    const change = await this.store.areas.delete(realm.id, areaId);
    if (change === null) throw notFound(`area ${areaId} not found`);
    if (origin !== undefined) change.origin = origin;
    this.listener.areaChanged(realm.id, change);
    this.control.announce({ kind: 'areas.changed', realm: realm.id });
    return change;
  }
}
