/**
 * Objects in MongoDB: one `objects` collection per realm database, with `history` beside it.
 *
 * Writes (object-writes.ts builds them): the server computes each object's new state from
 * the stored one (newer-fix rule, data merge), so concurrent writers in several processes
 * cannot undo each other's newer fix. Writes are grouped (write-groups.ts): the calls made
 * while earlier ones are being sent (many connections, one update each) go together, per
 * realm, in a fixed number of round trips whatever their count:
 * 1. one find of the group's ids: the objects before the write (the `old` of each change);
 * 2. one unordered bulkWrite of the updates (the keyed queue keeps two writes of one object
 *    out of one group, so their order within it does not matter), each applied only where
 *    the write stamp read in 1 is still there (object-writes.ts stampedFilter);
 * 3. only when some update was not applied (another process wrote or deleted the object
 *    between 1 and 2): one find of which, and one findOneAndUpdate of each of those, returning the document
 *    it replaced; so the reported `old` is always exactly what the write replaced;
 * 4. one unordered bulkWrite of the history upserts (keyed by object and fix time).
 * A failed update fails only the call it belongs to. There is no transaction: see
 * docs/operations.md for what a reader sees meanwhile.
 *
 * Reads: filters and shapes are prefilters (queries.ts) served by the indexes; every
 * document read is decided by matchesFilter and compileShape, in `_id` order (MongoDB
 * compares strings by UTF-8 bytes: code point order).
 */
import { MongoBulkWriteError, ObjectId, type AnyBulkWriteOperation, type BulkWriteResult, type Collection, type Document, type WriteError } from 'mongodb';
import { matchesFilter } from '../../domain/filter.js';
import { applyPatch, foldPatches } from '../../domain/object.js';
import { matchesSearch } from '../../domain/search.js';
import type { FoldedPatch, ObjectChange, ObjectPatch, TrackedObject } from '../../domain/types.js';
import { compileShape } from '../../geo/contains.js';
import type { HistoryEntry, HistoryQuery, ObjectListQuery, ObjectStore, Page, SearchHit, SearchQuery } from '../port.js';
import { historyEntryFromDoc, objectFromDoc, projectedFromDoc, type HistoryDoc, type ObjectDoc } from './documents.js';
import { KeyedQueue } from './keyed-queue.js';
import { DUPLICATE_KEY, guarded } from './mongo-errors.js';
import { historyWrites, objectWrite, stampedFilter, stampedUpdate, type WriteStamp } from './object-writes.js';
import { checkLimit, pageStart, toPage } from '../pages.js';
import { historyCursorTime } from './paging.js';
import { filterQuery, historyQuery, listQuery, OBJECT_READ_PROJECTION, searchPipeline, shapeQuery } from './queries.js';
import type { RealmDatabases } from './realm-databases.js';
import { WriteGroups, type GroupOutcome } from './write-groups.js';

/** Documents per batch a list reads from its cursor. */
const LIST_BATCH = 1000;
/** Rounds of write groups sent at once (write-groups.ts); the writes started meanwhile wait for the next. */
const GROUPS_IN_FLIGHT = 2;

type ObjectWriteOp = AnyBulkWriteOperation<ObjectDoc>;

/** For a grouped write: its stamp and the stamps read before it, by object id. */
export interface WriteStamps {
  stamp: WriteStamp;
  stored: ReadonlyMap<string, WriteStamp | null>;
}

/**
 * The bulkWrite operations of a batch, given the objects stored before it (pure; unit-tested).
 * With `stamps`, each update applies only where the stamp read is still there, and an object
 * that was there is never created by it (so that one deleted meanwhile is noticed as well).
 */
export function batchOperations(
  batch: readonly FoldedPatch[],
  olds: ReadonlyMap<string, TrackedObject>,
  now: string,
  stamps?: WriteStamps,
): { ops: ObjectWriteOp[]; written: FoldedPatch[] } {
  const ops: ObjectWriteOp[] = [];
  const written: FoldedPatch[] = [];
  for (const folded of batch) {
    const existed = olds.has(folded.id);
    if (folded.mustExist === true && !existed) continue;
    const write = objectWrite(folded, now);
    if (stamps === undefined) ops.push({ updateOne: { filter: write.filter, update: write.update, upsert: write.upsert } });
    else {
      const filter = stampedFilter(write, stamps.stored.get(folded.id) ?? null);
      ops.push({ updateOne: { filter, update: stampedUpdate(write, stamps.stamp), upsert: write.upsert && !existed } });
    }
    written.push(folded);
  }
  return { ops, written };
}

/** One call's writes in a group: its folded batch and its time. */
interface WriteCall {
  batch: FoldedPatch[];
  now: string;
}

/** An operation of a group: whose call it is, and what it writes. */
interface GroupOp {
  call: number;
  folded: FoldedPatch;
}

/** What an unordered bulkWrite did: its result and the indexes of the operations that failed, with the error. */
async function unorderedBulk<T extends Document>(collection: Collection<T>, ops: AnyBulkWriteOperation<T>[]): Promise<{ result: BulkWriteResult; failed: Map<number, WriteError> }> {
  const failed = new Map<number, WriteError>();
  try {
    return { result: await collection.bulkWrite(ops, { ordered: false }), failed };
  } catch (err) {
    // A write concern error, or none per operation: nothing is known to have been written.
    if (!(err instanceof MongoBulkWriteError) || err.err !== undefined) throw err;
    const errors: WriteError[] = ([] as WriteError[]).concat(err.writeErrors);
    if (errors.length === 0) throw err;
    for (const e of errors) failed.set(e.index, e);
    return { result: err.result, failed };
  }
}

export class MongoObjectStore implements ObjectStore {
  /** Writes to one object apply in call order (the port's rule); others run concurrently. */
  readonly queue = new KeyedQueue();
  private readonly groups = new WriteGroups<WriteCall, ObjectChange[]>((realm, calls) => this.writeGroup(realm, calls), GROUPS_IN_FLIGHT);

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
      () => guarded(() => this.groups.add(realm, { batch, now })),
    );
  }

  /** The writes of a group of calls to one realm (see the file's comment), an outcome per call. */
  private async writeGroup(realm: string, calls: readonly WriteCall[]): Promise<GroupOutcome<ObjectChange[]>[]> {
    await this.realms.forWrite(realm);
    const objects = this.objects(realm);
    const olds = new Map<string, TrackedObject>();
    const stored = new Map<string, WriteStamp | null>();
    const ids = calls.flatMap((call) => call.batch.map((folded) => folded.id));
    // One reply for the whole group (a cursor's first batch is otherwise 101 documents).
    for (const doc of await objects.find({ _id: { $in: ids } }, { projection: OBJECT_READ_PROJECTION, batchSize: ids.length }).toArray()) {
      olds.set(doc._id, objectFromDoc(doc));
      stored.set(doc._id, doc.n ?? null);
    }
    const stamps: WriteStamps = { stamp: new ObjectId(), stored };
    const ops: ObjectWriteOp[] = [];
    const owners: GroupOp[] = [];
    const written = calls.map((call, c) => {
      const built = batchOperations(call.batch, olds, call.now, stamps);
      ops.push(...built.ops);
      for (const folded of built.written) owners.push({ call: c, folded });
      return new Set(built.written);
    });
    const failed = new Map<number, unknown>();
    if (ops.length > 0) {
      const outcome = await unorderedBulk(objects, ops);
      const missed = owners.filter((_, i) => !outcome.failed.has(i)).length - outcome.result.matchedCount - outcome.result.upsertedCount;
      const redo: GroupOp[] = [];
      for (const [i, error] of outcome.failed) {
        const op = owners[i] as GroupOp;
        // An object made by another process since the read: its upsert met the id.
        if (error.code === DUPLICATE_KEY) redo.push(op);
        else failed.set(op.call, new MongoBulkWriteError({ message: error.errmsg ?? 'write failed', code: error.code, writeErrors: [error] }, outcome.result));
      }
      if (missed > 0) {
        const asked = owners.filter((_, i) => !outcome.failed.has(i));
        // Not applied: written by another process since the read, or deleted meanwhile.
        const applied = await objects.find({ _id: { $in: asked.map((op) => op.folded.id) }, n: stamps.stamp }, { projection: { _id: 1 }, batchSize: asked.length }).toArray();
        const ours = new Set(applied.map((doc) => doc._id));
        for (const op of asked) if (!ours.has(op.folded.id)) redo.push(op);
      }
      await Promise.all(redo.map((op) => this.rewrite(objects, op, calls, olds, written)));
    }
    const history: AnyBulkWriteOperation<HistoryDoc>[] = [];
    const historyOwners: number[] = [];
    const changes = calls.map((call, c) => {
      const out: ObjectChange[] = [];
      if (failed.has(c)) return out;
      for (const folded of call.batch) {
        if (!written[c]?.has(folded)) continue;
        const old = olds.get(folded.id) ?? null;
        const next = applyPatch(old, folded, call.now);
        for (const op of historyWrites(folded.fixes, next)) {
          history.push({ updateOne: op });
          historyOwners.push(c);
        }
        out.push({ realm, id: folded.id, old, new: next, history: folded.fixes, time: call.now });
      }
      return out;
    });
    if (history.length > 0) {
      const outcome = await unorderedBulk(this.historyOf(realm), history);
      for (const [i, error] of outcome.failed) {
        const c = historyOwners[i] as number;
        if (!failed.has(c)) failed.set(c, new MongoBulkWriteError({ message: error.errmsg ?? 'write failed', code: error.code, writeErrors: [error] }, outcome.result));
      }
    }
    return changes.map((value, c) => (failed.has(c) ? { status: 'rejected', reason: failed.get(c) } : { status: 'fulfilled', value }));
  }

  /**
   * Writes again an object another process wrote between the group's read and its write:
   * one findOneAndUpdate returning the document it replaced, the exact `old`.
   */
  private async rewrite(objects: Collection<ObjectDoc>, op: GroupOp, calls: readonly WriteCall[], olds: Map<string, TrackedObject>, written: Set<FoldedPatch>[]): Promise<void> {
    const call = calls[op.call] as WriteCall;
    const write = objectWrite(op.folded, call.now);
    const before = await objects.findOneAndUpdate(write.filter, stampedUpdate(write, new ObjectId()), {
      upsert: write.upsert,
      returnDocument: 'before',
      projection: OBJECT_READ_PROJECTION,
    });
    if (before === null) olds.delete(op.folded.id);
    else olds.set(op.folded.id, objectFromDoc(before));
    if (before === null && op.folded.mustExist === true) written[op.call]?.delete(op.folded);
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
