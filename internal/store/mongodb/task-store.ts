/**
 * Tasks in MongoDB: a realm database's `tasks` collection, one document per task keyed by
 * its id. `s`, the creation sequence lists are sorted by, comes from the realm's `counters`
 * collection (an atomic increment, so tasks created by several processes still order by
 * when each was created). Steps, location and data are kept as JSON text (key order and keys
 * such as `__proto__` exactly). An update reads the task, applies domain applyTaskPatch and
 * replaces it only if nobody changed it meanwhile (a version field), retrying otherwise.
 * A realm delete drops the realm's database, its tasks with it.
 */
import type { Collection } from 'mongodb';
import { applyTaskPatch } from '../../domain/task-input.js';
import type { TaskChange, TaskPatch, TaskRecord, TaskStatus, TaskStep } from '../../domain/task.js';
import type { Data, Location } from '../../domain/types.js';
import { LocusError, taskExists } from '../../errors.js';
import type { TaskStore } from '../port.js';
import { UPDATE_ATTEMPTS } from './area-store.js';
import { guarded, insertNew } from './mongo-errors.js';
import type { RealmDatabases } from './realm-databases.js';

export interface TaskDoc {
  _id: string;
  /** Creation sequence (counters `tasks`). */
  s: number;
  l: string | null;
  /** Description. */
  ds: string | null;
  st: string;
  /** Steps as JSON text. */
  sp: string;
  /** Target object id. */
  t: string | null;
  /** Location as JSON text. */
  loc: string | null;
  /** Data as JSON text. */
  d: string;
  c: string;
  u: string;
  /** Bumped by each update (optimistic concurrency). */
  v: number;
}

interface CounterDoc {
  _id: string;
  n: number;
}

export function taskToDoc(task: TaskRecord, sequence: number, version: number): TaskDoc {
  return {
    _id: task.id,
    s: sequence,
    l: task.label,
    ds: task.description,
    st: task.status,
    sp: JSON.stringify(task.steps),
    t: task.targetId,
    loc: task.location === null ? null : JSON.stringify(task.location),
    d: JSON.stringify(task.data),
    c: task.created,
    u: task.updated,
    v: version,
  };
}

export function taskFromDoc(doc: TaskDoc): TaskRecord {
  return {
    id: doc._id,
    label: doc.l ?? null,
    description: doc.ds ?? null,
    status: doc.st as TaskStatus,
    steps: JSON.parse(doc.sp) as TaskStep[],
    targetId: doc.t ?? null,
    location: doc.loc === null || doc.loc === undefined ? null : (JSON.parse(doc.loc) as Location),
    data: JSON.parse(doc.d) as Data,
    created: doc.c,
    updated: doc.u,
  };
}

export class MongoTaskStore implements TaskStore {
  constructor(private readonly realms: RealmDatabases) {}

  private tasks(realm: string): Collection<TaskDoc> {
    return this.realms.collection<TaskDoc>(realm, 'tasks');
  }

  /** The next creation sequence of the realm's tasks. */
  private async nextSequence(realm: string): Promise<number> {
    const counters = this.realms.collection<CounterDoc>(realm, 'counters');
    const doc = await counters.findOneAndUpdate({ _id: 'tasks' }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
    if (doc === null) throw new LocusError('internal', 'the task sequence could not be read');
    return doc.n;
  }

  create(realm: string, task: TaskRecord): Promise<TaskChange> {
    return guarded(async () => {
      await this.realms.forWrite(realm);
      const sequence = await this.nextSequence(realm);
      await insertNew(this.tasks(realm), taskToDoc(task, sequence, 0), (err) => taskExists(task.id, err));
      return { realm, id: task.id, old: null, new: task };
    });
  }

  update(realm: string, id: string, patch: TaskPatch, now: string): Promise<TaskChange | null> {
    return guarded(async () => {
      const tasks = this.tasks(realm);
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const doc = await tasks.findOne({ _id: id });
        if (doc === null) return null;
        const old = taskFromDoc(doc);
        const next = applyTaskPatch(old, patch, now);
        const result = await tasks.replaceOne({ _id: id, v: doc.v }, taskToDoc(next, doc.s, doc.v + 1));
        if (result.matchedCount === 1) return { realm, id, old, new: next };
      }
      throw new LocusError('unavailable', `task ${id} is being changed by others: try again`);
    });
  }

  get(realm: string, id: string): Promise<TaskRecord | null> {
    return guarded(async () => {
      const doc = await this.tasks(realm).findOne({ _id: id });
      return doc === null ? null : taskFromDoc(doc);
    });
  }

  list(realm: string): Promise<TaskRecord[]> {
    return guarded(async () => (await this.tasks(realm).find({}, { sort: { s: 1 } }).toArray()).map(taskFromDoc));
  }

  delete(realm: string, id: string): Promise<TaskChange | null> {
    return guarded(async () => {
      const doc = await this.tasks(realm).findOneAndDelete({ _id: id });
      return doc === null ? null : { realm, id, old: taskFromDoc(doc), new: null };
    });
  }
}
