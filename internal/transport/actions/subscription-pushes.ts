/**
 * Hivekit subscription pushes on the v1 wire (hivekit-compat.md 5.3–5.5): the messages of the
 * updates service/live hands a connection (push-port.ts), one element of a push frame each:
 * `{"typ":"sub","id","uty":"ful"|"dta", "obj"|"are"|"tsk"|"rea"|"dat"|"ins"|"log": …}`.
 */
import type { SubscriptionUpdate } from '../../service/live/push-port.js';
import type { TaskRecord } from '../../domain/task.js';
import type { ConnectionStatus, TrackedObject } from '../../domain/types.js';
import { instructionPushEntry } from './v1-instruction-records.js';
import { areaRecord, objectRecord, realmRecord, taskRecord } from './v1-records.js';

/**
 * Records of `dis` objects as last written, shared by every subscription that pushes the same
 * write (records are never changed once built; a `con` object's is built each time, since its
 * status may change while the object does not).
 */
const disconnected = new WeakMap<TrackedObject, object>();

function recordOf(o: TrackedObject, statusOf: (id: string) => ConnectionStatus): object {
  const status = statusOf(o.id);
  if (status !== 'dis') return objectRecord(o, status);
  let record = disconnected.get(o);
  if (record === undefined) {
    record = objectRecord(o, status);
    disconnected.set(o, record);
  }
  return record;
}

function records(objects: readonly TrackedObject[], statusOf: (id: string) => ConnectionStatus): Record<string, object> {
  const out: Record<string, object> = {};
  for (const o of objects) out[o.id] = recordOf(o, statusOf);
  return out;
}

function taskRecords(tasks: readonly TaskRecord[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const task of tasks) out[task.id] = taskRecord(task);
  return out;
}

/** The v1 message of one update. */
export function subscriptionMessage(update: SubscriptionUpdate): object {
  const id = update.subscription;
  switch (update.kind) {
    case 'objects': {
      const { statusOf } = update;
      if (update.full) return { typ: 'sub', id, uty: 'ful', obj: { cre: records(update.created, statusOf) } };
      // Only the parts that have something, in this order.
      const obj: Record<string, object> = {};
      if (update.created.length > 0) obj.cre = records(update.created, statusOf);
      if (update.updated.length > 0) obj.upd = records(update.updated, statusOf);
      if (update.deleted.length > 0) obj.del = records(update.deleted, statusOf);
      return { typ: 'sub', id, uty: 'dta', obj };
    }
    case 'areas': {
      const are: Record<string, object> = {};
      for (const area of update.areas) are[area.id] = areaRecord(area);
      return { typ: 'sub', id, uty: 'ful', are };
    }
    case 'tasks': {
      if (update.full) return { typ: 'sub', id, uty: 'ful', tsk: { cre: taskRecords(update.created) } };
      // Only the parts that have something, in this order.
      const tsk: Record<string, object> = {};
      if (update.created.length > 0) tsk.cre = taskRecords(update.created);
      if (update.updated.length > 0) tsk.upd = taskRecords(update.updated);
      if (update.deleted.length > 0) tsk.del = taskRecords(update.deleted);
      return { typ: 'sub', id, uty: 'dta', tsk };
    }
    case 'realmData':
      return { typ: 'sub', id, uty: 'ful', rea: realmRecord(update.realm, update.label, update.data) };
    case 'realmEvent':
      // Exactly these keys (compat 3.8: deep equality in the client's tests).
      return { typ: 'sub', id, uty: 'ful', dat: { typ: 'rea', id: update.realm, act: update.act } };
    case 'instructions': {
      // `ful`, so that deletions show (compat 5.3).
      const ins: Record<string, object> = {};
      for (const record of update.instructions) ins[record.id] = instructionPushEntry(record);
      return { typ: 'sub', id, uty: 'ful', ins };
    }
    case 'log':
      // `ful`: the client keeps a `dta` push's array by index on top of the previous one.
      return { typ: 'sub', id, uty: 'ful', log: update.entries };
  }
}

/** The messages of one push cycle's updates, in order. */
export function subscriptionMessages(updates: readonly SubscriptionUpdate[]): object[] {
  return updates.map(subscriptionMessage);
}
