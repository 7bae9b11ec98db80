/** Object update rules: folding a batch, merging into the stored state. */
import type { Data, DataPatch, FoldedPatch, Location, ObjectPatch, TrackedObject } from './types.js';

/**
 * Merges `patch` into `old` key by key; a key set to null is removed. Never mutates
 * its inputs (it may return either of them: data is never mutated once built). A key
 * such as `__proto__` stays an ordinary own property: spread copies it as one, and it
 * is defined, never assigned.
 */
export function mergeData(old: Data, patch: DataPatch | undefined): Data {
  if (patch === undefined) return old;
  const keys = Object.keys(patch);
  // A new object's data (the bulk-ingest case): the patch itself when it removes nothing.
  if (Object.keys(old).length === 0 && keys.every((key) => patch[key] !== null)) return patch as Data;
  const merged: Data = { ...old };
  for (const key of keys) {
    const value = patch[key];
    if (value === null || value === undefined) delete merged[key];
    else if (key === '__proto__') Object.defineProperty(merged, key, { value, writable: true, enumerable: true, configurable: true });
    else merged[key] = value;
  }
  return merged;
}

/** Merges two data patches (b after a), keeping nulls so that they still remove keys. */
function combineDataPatches(a: DataPatch | undefined, b: DataPatch | undefined): DataPatch | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Object.fromEntries([...Object.entries(a), ...Object.entries(b)]);
}

/** True when fix `a` is at least as new as `b` (equal times: the later write wins). */
export function isNotOlder(a: Location, b: Location): boolean {
  return a.time >= b.time;
}

/**
 * Folds a batch of patches into one patch per id, in the order ids first appear.
 * Several entries of one id are its location history: every fix is kept, and the
 * newest one (by time; equal times: the later entry) becomes the candidate current location.
 */
export function foldPatches(patches: readonly ObjectPatch[]): FoldedPatch[] {
  const byId = new Map<string, FoldedPatch>();
  for (const patch of patches) {
    let folded = byId.get(patch.id);
    if (folded === undefined) {
      folded = { id: patch.id, fixes: [], latest: null };
      // The id's first patch of the batch decides: one before it may have created the object.
      if (patch.mustExist === true) folded.mustExist = true;
      byId.set(patch.id, folded);
    }
    if (patch.label !== undefined) folded.label = patch.label;
    if (patch.tasks !== undefined) folded.tasks = patch.tasks;
    if (patch.data !== undefined) folded.data = combineDataPatches(folded.data, patch.data);
    if (patch.location !== undefined) {
      folded.fixes.push(patch.location);
      if (folded.latest === null || isNotOlder(patch.location, folded.latest)) folded.latest = patch.location;
    }
  }
  return [...byId.values()];
}

/** True when two task id lists (absent: none) hold the same ids in the same order. */
export function sameTasks(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  const n = a === undefined ? 0 : a.length;
  if (n !== (b === undefined ? 0 : b.length)) return false;
  for (let i = 0; i < n; i++) if ((a as readonly string[])[i] !== (b as readonly string[])[i]) return false;
  return true;
}

/**
 * The object's task ids after a patch: the given ones replace them ([] clears them: then
 * absent), the same ones keep the old array (the store writes nothing for it), none given
 * keeps them.
 */
function nextTasks(old: string[] | undefined, given: string[] | undefined): string[] | undefined {
  if (given === undefined || sameTasks(old, given)) return old;
  return given.length === 0 ? undefined : given;
}

/**
 * The object after applying a folded patch to its stored state (null: new object).
 * An older fix never replaces a newer current location; any fix marks the object as seen.
 */
export function applyPatch(old: TrackedObject | null, patch: FoldedPatch, now: string): TrackedObject {
  const base: TrackedObject = old ?? { id: patch.id, label: null, location: null, data: {}, seen: null };
  let location = base.location;
  if (patch.latest !== null && (location === null || isNotOlder(patch.latest, location))) location = patch.latest;
  const next: TrackedObject = {
    id: base.id,
    label: patch.label === undefined ? base.label : patch.label,
    location,
    data: mergeData(base.data, patch.data),
    seen: patch.fixes.length > 0 ? now : base.seen,
  };
  // Only an object with tasks has the key (a tracker's objects keep their shape).
  const tasks = nextTasks(base.tasks, patch.tasks);
  if (tasks !== undefined) next.tasks = tasks;
  return next;
}
