/**
 * The MongoDB write of one object's folded patch (domain/object.ts foldPatches), built as
 * a pure value: the filter, an update pipeline and the upsert flag, and the history upserts
 * of its fixes. The driver calls (object-store.ts) only send them.
 *
 * The update is computed by the server from the stored document, so that it is right
 * whatever another process wrote since this one last read the object:
 * - the newer-fix rule is a `$cond` on the stored fix time `t`: the batch's newest fix
 *   becomes current only when no newer one is stored (equal times: the later write wins);
 * - data merges key by key (pairs replaced in place, removed, or appended in patch order),
 *   exactly as domain mergeData; each pair carries its value's search words;
 * - label and task ids are replaced when given; `seen` is set by a write that carries fixes.
 * Every value from a client is wrapped in `$literal`: a string such as "$x" is data, never
 * a field path.
 *
 * Every write also stamps the document with a value no other write uses (`n`, stamped):
 * a grouped write (object-store.ts) read the documents before and applies each update only
 * where the stamp it read is still there, so that the `old` it reports is exactly what it
 * replaced; where another process wrote in between, it finds out and writes that object again.
 */
import { searchWords } from '../../domain/search.js';
import type { ObjectId } from 'mongodb';
import type { Data, DataPatch, FoldedPatch, Location, TrackedObject } from '../../domain/types.js';
import { cleanLocation, dataToPairs, distinctWords, geoPoint, objectPair, type DataPair } from './documents.js';

export type Expression = unknown;

export interface ObjectWrite {
  filter: { _id: string };
  /** An update pipeline (one `$set` stage). */
  update: [{ $set: Record<string, Expression> }];
  /** False for a patch of an object that must exist (mustExist): nothing is created. */
  upsert: boolean;
}

/** Whether the stored current fix is not newer than `time` (missing or null: none stored). */
function storedNotNewer(time: string): Expression {
  return { $lte: [{ $ifNull: ['$t', null] }, { $literal: time }] };
}

/** The data merge of a data patch as an aggregation expression over the stored pairs `d`. */
export function dataMergeExpression(patch: DataPatch): Expression {
  const keys = Object.keys(patch);
  const removed = keys.filter((k) => patch[k] === null);
  const setKeys = keys.filter((k) => patch[k] !== null);
  const setPairs: DataPair[] = setKeys.map((k) => objectPair(k, patch[k] as Data[string]));
  return {
    $let: {
      vars: { old: { $ifNull: ['$d', []] } },
      in: {
        $concatArrays: [
          // Stored pairs: removed ones dropped, replaced ones taking the new value in place.
          {
            $map: {
              input: { $filter: { input: '$$old', as: 'p', cond: { $not: [{ $in: ['$$p.k', { $literal: removed }] }] } } },
              as: 'p',
              in: {
                $let: {
                  vars: { i: { $indexOfArray: [{ $literal: setKeys }, '$$p.k'] } },
                  in: { $cond: [{ $gte: ['$$i', 0] }, { $arrayElemAt: [{ $literal: setPairs }, '$$i'] }, '$$p'] },
                },
              },
            },
          },
          // New keys, in patch order.
          { $filter: { input: { $literal: setPairs }, as: 'n', cond: { $not: [{ $in: ['$$n.k', '$$old.k'] }] } } },
        ],
      },
    },
  };
}

/** The update of one object for its folded patch, received at `now`. */
export function objectWrite(folded: FoldedPatch, now: string): ObjectWrite {
  const set: Record<string, Expression> = {};
  set.wi = { $literal: distinctWords(searchWords(folded.id)) };
  if (folded.label !== undefined) {
    set.l = { $literal: folded.label };
    set.wl = { $literal: folded.label === null ? [] : searchWords(folded.label) };
  } else {
    set.l = { $ifNull: ['$l', null] };
    set.wl = { $ifNull: ['$wl', []] };
  }
  set.d = folded.data === undefined ? { $ifNull: ['$d', []] } : dataMergeExpression(folded.data);
  const latest = folded.latest;
  if (latest !== null) {
    const newer = storedNotNewer(latest.time);
    set.loc = { $cond: [newer, { $literal: cleanLocation(latest) }, { $ifNull: ['$loc', null] }] };
    set.g = { $cond: [newer, { $literal: geoPoint(latest) }, '$g'] };
    set.t = { $cond: [newer, { $literal: latest.time }, { $ifNull: ['$t', null] }] };
  } else {
    set.loc = { $ifNull: ['$loc', null] };
    set.t = { $ifNull: ['$t', null] };
  }
  set.s = folded.fixes.length > 0 ? { $literal: now } : { $ifNull: ['$s', null] };
  // Task ids: given ones replace them, [] clears them (the field goes).
  if (folded.tasks !== undefined) set.tk = folded.tasks.length === 0 ? '$$REMOVE' : { $literal: folded.tasks };
  return { filter: { _id: folded.id }, update: [{ $set: set }], upsert: folded.mustExist !== true };
}

/** A write's stamp (documents.ts ObjectDoc.n): an ObjectId, unique to the write that sets it. */
export type WriteStamp = ObjectId;

/** The write, also setting the document's stamp to `stamp`. */
export function stampedUpdate(write: ObjectWrite, stamp: WriteStamp): ObjectWrite['update'] {
  return [{ $set: { ...write.update[0].$set, n: { $literal: stamp } } }];
}

/**
 * The filter of a write applied only where the stamp read before it is still there
 * (`stored`: null for an object that was not there, or was written before stamps existed).
 */
export function stampedFilter(write: ObjectWrite, stored: WriteStamp | null): { _id: string; n: WriteStamp | null } {
  return { _id: write.filter._id, n: stored };
}

/** One history upsert: the fix of time `t` of object `o`, with the object's label and data after the write. */
export interface HistoryWrite {
  filter: { o: string; t: string };
  update: { $set: { at: Date; f: Location; l: string | null; d: DataPair[] } };
  upsert: true;
}

/**
 * The history upserts of an object's write: one per distinct fix time (a later fix of an
 * equal time wins, in the batch as over stored ones), each with `next`'s label and data
 * (the object after the whole batch, hivekit-compat.md 7.1).
 */
export function historyWrites(fixes: readonly Location[], next: TrackedObject): HistoryWrite[] {
  const byTime = new Map<string, Location>();
  for (const fix of fixes) {
    byTime.delete(fix.time);
    byTime.set(fix.time, fix);
  }
  const d = dataToPairs(next.data, false);
  return [...byTime.values()].map((fix) => ({
    filter: { o: next.id, t: fix.time },
    update: { $set: { at: new Date(fix.time), f: cleanLocation(fix), l: next.label, d } },
    upsert: true,
  }));
}
