/**
 * Objects in MongoDB: one `objects` collection per realm database, with `history` beside it.
 *
 * Writes (object-writes.ts builds them): the server computes each object's new state from
 * the stored one (newer-fix rule, data merge), so concurrent writers in several processes
 * cannot undo each other's newer fix. The old state each ObjectChange reports:
 * - a batch of up to SINGLE_WRITE_IDS ids (single writes, v1 updates): from the write
 *   itself, one findOneAndUpdate per id returning the document before it;
 * - a larger batch (bulk ingest): one find of the batch's ids, then one unordered
 *   bulkWrite of the updates. One round trip each instead of one per object. The stored
 *   state is right whatever happens in between; only the reported `old` (and the `new`
 *   built from it) can miss a write that another process made to the same object between
 *   the read and the write (within one process, writes to one object are queued, so this
 *   needs two processes writing one object in the same milliseconds).
 * Then the fixes go to `history` (one unordered bulkWrite of upserts keyed by object and
 * fix time). There is no transaction: see docs/operations.md for what a reader sees meanwhile.
 *
 * Reads: filters and shapes are prefilters (queries.ts) served by the indexes; every
 * document read is decided by matchesFilter and compileShape, in `_id` order (MongoDB
 * compares strings by UTF-8 bytes: code point order).
 */
import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import { matchesFilter } from '../../domain/filter.js';
import { applyPatch, foldPatches } from '../../domain/object.js';
import { matchesSearch } from '../../domain/search.js';
import type { FoldedPatch, ObjectChange, ObjectPatch, TrackedObject } from '../../domain/types.js';
import { compileShape } from '../../geo/contains.js';
import type { HistoryEntry, HistoryQuery, ObjectListQuery, ObjectStore, Page, SearchHit, SearchQuery } from '../port.js';
import { historyEntryFromDoc, objectFromDoc, projectedFromDoc, type HistoryDoc, type ObjectDoc } from './documents.js';
import { KeyedQueue } from './keyed-queue.js';
import { guarded } from './mongo-errors.js';
import { historyWrites, objectWrite } from './object-writes.js';
import { checkLimit, pageStart, toPage } from '../pages.js';
import { historyCursorTime } from './paging.js';
import { filterQuery, historyQuery, listQuery, OBJECT_READ_PROJECTION, searchPipeline, shapeQuery } from './queries.js';
import type { RealmDatabases } from './realm-databases.js';

/** Batches of at most this many ids write each object with findOneAndUpdate (exact old state). */
export const SINGLE_WRITE_IDS = 8;
/** Documents per batch a list reads from its cursor. */
const LIST_BATCH = 1000;

type ObjectWriteOp = AnyBulkWriteOperation<ObjectDoc>;

/** The bulkWrite operations of a batch, given the objects stored before it (pure; unit-tested). */
export function batchOperations(batch: readonly FoldedPatch[], olds: ReadonlyMap<string, TrackedObject>, now: string): { ops: ObjectWriteOp[]; written: FoldedPatch[] } {
  const ops: ObjectWriteOp[] = [];
  const written: FoldedPatch[] = [];
  for (const folded of batch) {
    if (folded.mustExist === true && !olds.has(folded.id)) continue;
    const write = objectWrite(folded, now);
    ops.push({ updateOne: { filter: write.filter, update: write.update, upsert: write.upsert } });
    written.push(folded);
  }
  return { ops, written };
}

export class MongoObjectStore implements ObjectStore {
  /** Writes to one object apply in call order (the port's rule); others run concurrently. */
  readonly queue = new KeyedQueue();

  constructor(private readonly realms: RealmDatabases) {}

  private objects(realm: string): Collection<ObjectDoc> {
    return this.realms.collection<ObjectDoc>(realm, 'objects');
  }

  private historyOf(realm: string): Collection<HistoryDoc> {
    return this.realms.collection<HistoryDoc>(realm, 'history');
  }

  upsertMany(realm: string, patches: ObjectPatch[], now: string): Promise<ObjectChange[]> {
    if (patches.length === 0) return Promise.resolve([]);
    const batch = foldPatches(patches);
    return this.queue.run(
      batch.map((folded) => `${realm}\u0000${folded.id}`),
      () => guarded(() => this.write(realm, batch, now)),
    );
  }

  private async write(realm: string, batch: FoldedPatch[], now: string): Promise<ObjectChange[]> {
    await this.realms.forWrite(realm);
    const objects = this.objects(realm);
    const olds = new Map<string, TrackedObject>();
    let written: FoldedPatch[];
    if (batch.length <= SINGLE_WRITE_IDS) {
      const befores = await Promise.all(
        batch.map((folded) => {
          const write = objectWrite(folded, now);
          return objects.findOneAndUpdate(write.filter, write.update, {
            upsert: write.upsert,
            returnDocument: 'before',
            projection: OBJECT_READ_PROJECTION,
          });
        }),
      );
      written = [];
      batch.forEach((folded, i) => {
        const before = befores[i] ?? null;
        if (before !== null) olds.set(folded.id, objectFromDoc(before));
        if (before !== null || folded.mustExist !== true) written.push(folded);
      });
    } else {
      const ids = batch.map((folded) => folded.id);
      for (const doc of await objects.find({ _id: { $in: ids } }, { projection: OBJECT_READ_PROJECTION }).toArray()) {
        olds.set(doc._id, objectFromDoc(doc));
      }
      const built = batchOperations(batch, olds, now);
      written = built.written;
      if (built.ops.length > 0) await objects.bulkWrite(built.ops, { ordered: false });
    }
    const changes: ObjectChange[] = [];
    const history: AnyBulkWriteOperation<HistoryDoc>[] = [];
    for (const folded of written) {
      const old = olds.get(folded.id) ?? null;
      const next = applyPatch(old, folded, now);
      for (const op of historyWrites(folded.fixes, next)) history.push({ updateOne: op });
      changes.push({ realm, id: folded.id, old, new: next, history: folded.fixes, time: now });
    }
    if (history.length > 0) await this.historyOf(realm).bulkWrite(history, { ordered: false });
    return changes;
  }

  get(realm: string, id: string): Promise<TrackedObject | null> {
    return guarded(async () => {
      const doc = await this.objects(realm).findOne({ _id: id }, { projection: OBJECT_READ_PROJECTION });
      return doc === null ? null : objectFromDoc(doc);
    });
  }

  list(realm: string, query: ObjectListQuery): Promise<Page<TrackedObject>> {
    return guarded(async () => {
      const after = pageStart(query);
      const filter = query.filter !== undefined && query.filter.length > 0 ? query.filter : null;
      const inside = query.shape === undefined ? null : compileShape(query.shape);
      const mongoQuery = listQuery(after, filterQuery(filter ?? undefined), query.shape === undefined ? null : shapeQuery(query.shape));
      const fields = query.fields;
      const cursor = this.objects(realm).find(mongoQuery, {
        projection: OBJECT_READ_PROJECTION,
        sort: { _id: 1 },
        batchSize: Math.min(LIST_BATCH, query.limit + 1),
        allowDiskUse: true,
      });
      // Nothing to decide after the query: the page is its first limit + 1 documents.
      if (inside === null && filter === null) cursor.limit(query.limit + 1);
      const rows: ObjectDoc[] = [];
      try {
        for await (const doc of cursor) {
          if (inside !== null) {
            const loc = doc.loc;
            if (loc === undefined || loc === null || !inside(loc.longitude, loc.latitude)) continue;
          }
          if (filter !== null && !matchesFilter(objectFromDoc(doc), filter)) continue;
          rows.push(doc);
          if (rows.length > query.limit) break;
        }
      } finally {
        await cursor.close();
      }
      const convert = fields === undefined ? objectFromDoc : (doc: ObjectDoc) => projectedFromDoc(doc, fields);
      return toPage(rows, query.limit, convert, (doc) => doc._id);
    });
  }

  delete(realm: string, id: string, now: string): Promise<ObjectChange | null> {
    return this.queue.run([`${realm}\u0000${id}`], () =>
      guarded(async () => {
        const before = await this.objects(realm).findOneAndDelete({ _id: id }, { projection: OBJECT_READ_PROJECTION });
        if (before === null) return null;
        await this.historyOf(realm).deleteMany({ o: id });
        return { realm, id, old: objectFromDoc(before), new: null, history: [], time: now };
      }),
    );
  }

  search(realm: string, query: SearchQuery): Promise<SearchHit[]> {
    return guarded(async () => {
      checkLimit(query.limit);
      const fields = query.fields;
      const projection: Record<string, 0 | 1> = { wi: 0, wl: 0, g: 0, t: 0 };
      const docs = await this.objects(realm)
        .aggregate<ObjectDoc & { _score: number }>(searchPipeline(query.words, query.limit, projection), { allowDiskUse: true })
        .toArray();
      const hits: SearchHit[] = [];
      for (const doc of docs) {
        const whole = objectFromDoc(doc);
        // The words decide (domain/search.ts); the query's prefix matches are the same test.
        if (!matchesSearch(whole, query.words)) continue;
        hits.push({ object: fields === undefined ? whole : projectedFromDoc(doc, fields), score: doc._score });
      }
      return hits;
    });
  }

  history(realm: string, id: string, query: HistoryQuery): Promise<Page<HistoryEntry>> {
    return guarded(async () => {
      checkLimit(query.limit);
      const cursor = historyCursorTime(query.cursor);
      const asc = query.order === 'asc';
      const range: { from?: string; to?: string } = {};
      if (query.from !== undefined) range.from = query.from;
      if (query.to !== undefined) range.to = query.to;
      const docs = await this.historyOf(realm)
        .find(historyQuery(id, range, cursor, asc), { sort: { t: asc ? 1 : -1 }, limit: query.limit + 1, projection: { _id: 0 } })
        .toArray();
      return toPage(docs, query.limit, historyEntryFromDoc, (doc) => doc.t);
    });
  }

  pruneHistory(realm: string, before: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    if (options.signal?.aborted === true) return Promise.resolve(0);
    return guarded(async () => {
      const result = await this.historyOf(realm).deleteMany({ t: { $lt: before } });
      return result.deletedCount;
    });
  }

  /** For a realm deleted while its writes were queued: they run (and fail) first. */
  async settle(): Promise<void> {
    await this.queue.idle();
  }
}
