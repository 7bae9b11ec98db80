/**
 * Task use cases (hivekit-compat.md 4.10): validate (domain/task-input.ts), write through the
 * store port, and tell every process: each change is published on the event bus as a
 * TaskChangedEvent (`tsk`), which the task subscriptions of every process hear
 * (service/live/realm-tasks.ts).
 *
 * Rights are the callers' (as for areas): the v1 dispatcher and REST's realm gate check the
 * realm-level right (reads R; create C, update U, delete D), the handlers the id-level `per`
 * grant; lists take the caller's read filter.
 */
import type { IdFilter } from '../auth/rights.js';
import type { TaskChangedEvent } from '../domain/events.js';
import { parseTaskCreate, parseTaskId, parseTaskPatch } from '../domain/task-input.js';
import type { TaskChange, TaskRecord } from '../domain/task.js';
import type { Realm } from '../domain/types.js';
import { unknownTask } from '../errors.js';
import type { Store } from '../store/port.js';
import { isoTime, type Clock } from './clock.js';

/** Where task changes go (events/port.ts EventBus.publish). */
export interface TaskEvents {
  publish(realm: string, events: readonly TaskChangedEvent[]): void;
}

export class TaskService {
  constructor(
    private readonly store: Pick<Store, 'tasks'>,
    private readonly clock: Clock,
    private readonly events: TaskEvents,
  ) {}

  /** 409 `task with id <id> already exists` when the id exists; a bad body is a 400 and stores nothing. */
  async create(realm: Realm, id: string, body: unknown): Promise<TaskRecord> {
    const task = parseTaskCreate(id, body, isoTime(this.clock()));
    const change = await this.store.tasks.create(realm.id, task);
    this.announce(realm, change);
    return task;
  }

  /** Partial update; 404 `unknown task <id>` when missing. */
  async update(realm: Realm, id: string, body: unknown): Promise<TaskRecord> {
    const now = isoTime(this.clock());
    const patch = parseTaskPatch(id, body, now);
    const change = await this.store.tasks.update(realm.id, id, patch, now);
    if (change === null || change.new === null) throw unknownTask(id);
    this.announce(realm, change);
    return change.new;
  }

  async get(realm: Realm, id: string): Promise<TaskRecord> {
    const task = await this.store.tasks.get(realm.id, parseTaskId(id));
    if (task === null) throw unknownTask(id);
    return task;
  }

  /** Every task of the realm in creation order; `readable` (auth/rights.ts readFilter; null: every task) keeps those the caller may read. */
  async list(realm: Realm, readable: IdFilter | null = null): Promise<TaskRecord[]> {
    const tasks = await this.store.tasks.list(realm.id);
    return readable === null ? tasks : tasks.filter((task) => readable(task.id));
  }

  /** 404 `unknown task <id>` when missing. */
  async delete(realm: Realm, id: string): Promise<TaskChange> {
    const change = await this.store.tasks.delete(realm.id, parseTaskId(id));
    if (change === null) throw unknownTask(id);
    this.announce(realm, change);
    return change;
  }

  private announce(realm: Realm, change: TaskChange): void {
    this.events.publish(realm.id, [{ kind: 'tsk', realm: realm.id, change }]);
  }
}
