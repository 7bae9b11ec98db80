/**
 * Areas in MongoDB: a realm database's `areas` collection, with a 2dsphere index over a
 * geometry of each area's defining points (documents.ts areaGeometry). An update reads the
 * area, applies domain applyAreaPatch and replaces it only if nobody changed it meanwhile
 * (a version field), retrying otherwise: concurrent updates from several processes all
 * take effect.
 */
import type { Collection } from 'mongodb';
import { areaExists, LocusError, notFound } from '../../errors.js';
import { applyAreaPatch } from '../../domain/area.js';
import type { Area, AreaChange, AreaCreate, AreaPatch } from '../../domain/types.js';
import type { AreaListQuery, AreaStore, Page } from '../port.js';
import { areaFromDoc, areaToDoc, type AreaDoc } from './documents.js';
import { guarded, insertNew } from './mongo-errors.js';
import { pageStart, toPage } from '../pages.js';
import type { RealmDatabases } from './realm-databases.js';

/** Attempts of an optimistic update before it gives up (`unavailable`: try again). */
export const UPDATE_ATTEMPTS = 20;

export class MongoAreaStore implements AreaStore {
  constructor(private readonly realms: RealmDatabases) {}

  private areas(realm: string): Collection<AreaDoc> {
    return this.realms.collection<AreaDoc>(realm, 'areas');
  }

  create(realm: string, area: AreaCreate): Promise<AreaChange> {
    return guarded(async () => {
      await this.realms.forWrite(realm);
      const created: Area = { id: area.id, label: area.label, shape: area.shape, data: area.data };
      await insertNew(this.areas(realm), areaToDoc(created, 0), (err) => areaExists(area.id, err));
      return { realm, id: area.id, old: null, new: created };
    });
  }

  update(realm: string, id: string, patch: AreaPatch): Promise<AreaChange> {
    return guarded(async () => {
      const areas = this.areas(realm);
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const doc = await areas.findOne({ _id: id });
        if (doc === null) throw notFound(`area ${id} not found`);
        const old = areaFromDoc(doc);
        const next = applyAreaPatch(old, patch);
        const result = await areas.replaceOne({ _id: id, v: doc.v }, areaToDoc(next, doc.v + 1));
        if (result.matchedCount === 1) return { realm, id, old, new: next };
      }
      throw new LocusError('unavailable', `area ${id} is being changed by others: try again`);
    });
  }

  get(realm: string, id: string): Promise<Area | null> {
    return guarded(async () => {
      const doc = await this.areas(realm).findOne({ _id: id });
      return doc === null ? null : areaFromDoc(doc);
    });
  }

  list(realm: string, query: AreaListQuery): Promise<Page<Area>> {
    return guarded(async () => {
      const after = pageStart(query);
      const docs = await this.areas(realm)
        .find(after === '' ? {} : { _id: { $gt: after } }, { sort: { _id: 1 }, limit: query.limit + 1 })
        .toArray();
      return toPage(docs, query.limit, areaFromDoc, (doc) => doc._id);
    });
  }

  delete(realm: string, id: string): Promise<AreaChange | null> {
    return guarded(async () => {
      const doc = await this.areas(realm).findOneAndDelete({ _id: id });
      return doc === null ? null : { realm, id, old: areaFromDoc(doc), new: null };
    });
  }
}
