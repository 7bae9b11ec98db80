/**
 * Task subscriptions of one realm (`dat.typ:"tsk"`, hivekit-compat.md 4.10, 5.3): pushes
 * the tasks created, changed and deleted (push-port.ts; `tsk` with `cre`/`upd`/`del` maps on the
 * v1 wire) exactly as object subscriptions push objects. A task
 * subscription covers every task of the realm its subscriber may read (no scope, no
 * conditions), so the realm's tasks are held once, in creation order, while it has task
 * subscriptions: loaded from the store at the first one (the changes heard meanwhile are
 * replayed on what was read) and kept current from the `tsk` events of every process.
 *
 * Per cycle, each subscription remembers for every task that changed the record its client
 * held at the cycle's start; at the push it compares with the record held now: none before
 * → `cre`, none now → `del` (keyed by id, with the last record), another record → `upd`.
 * A task created and deleted within one cycle is not pushed. `exe:true` and `upd` push the
 * whole readable set (`uty:"ful"`, `{"tsk":{"cre":{…}}}`). After a bus outage (resync) the
 * tasks are read again and the differences pushed as `cre`/`upd`/`del`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { IdFilter } from '../../auth/rights.js';
import type { TaskChange, TaskRecord } from '../../domain/task.js';
import type { TaskStore } from '../../store/port.js';
import type { ConnectionLive, LiveSubscription } from './connection-live.js';
import type { SubscriptionUpdate } from './push-port.js';

export class TaskSubscription implements LiveSubscription {
  /** Tasks changed this cycle → the record the client held at the cycle's start (null: none). */
  private readonly touched = new Map<string, TaskRecord | null>();
  private full = false;
  private closed = false;

  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly realm: RealmTasks,
    /** The task ids the subscriber may read (auth/rights.ts readFilter); null: every id. */
    readonly readable: IdFilter | null,
  ) {}

  /** Notes that task `id` changed; `before` is what the client held (the first change of the cycle counts). */
  touch(id: string, before: TaskRecord | null): void {
    if (this.closed) return;
    if (!this.touched.has(id)) this.touched.set(id, before);
    this.conn.schedule(this);
  }

  /** The next cycle pushes the whole readable set. */
  pushFull(): void {
    this.full = true;
    this.conn.schedule(this);
  }

  /** Whether a change is owed (a cycle ran while the tasks were still loading). */
  get pending(): boolean {
    return this.full || this.touched.size > 0;
  }

  drain(out: SubscriptionUpdate[]): void {
    const held = this.realm.held;
    // Still loading: the changes wait for the set (RealmTasks schedules them once it is read).
    if (held === null) return;
    const { readable } = this;
    if (this.full) {
      this.full = false;
      this.touched.clear();
      const created: TaskRecord[] = [];
      for (const [id, task] of held) if (readable === null || readable(id)) created.push(task);
      out.push({ kind: 'tasks', subscription: this.id, full: true, created, updated: [], deleted: [] });
      return;
    }
    const created: TaskRecord[] = [];
    const updated: TaskRecord[] = [];
    const deleted: TaskRecord[] = [];
    for (const [id, before] of this.touched) {
      const now = held.get(id);
      if (now !== undefined) {
        if (before === null) created.push(now);
        else if (now !== before) updated.push(now);
      } else if (before !== null) {
        deleted.push(before);
      }
    }
    this.touched.clear();
    if (created.length === 0 && updated.length === 0 && deleted.length === 0) return;
    out.push({ kind: 'tasks', subscription: this.id, full: false, created, updated, deleted });
  }

  detach(): void {
    this.closed = true;
    this.touched.clear();
    this.conn.unschedule(this);
    this.realm.remove(this);
  }
}

export class RealmTasks {
  readonly subs = new Set<TaskSubscription>();
  /** The realm's tasks in creation order while it has task subscriptions (null: not loaded). */
  held: Map<string, TaskRecord> | null = null;
  private load: Promise<void> | null = null;
  /** The changes heard during each read under way, replayed on what it read. */
  private readonly reads = new Set<TaskChange[]>();

  constructor(
    readonly realm: string,
    private readonly store: Pick<TaskStore, 'list'>,
    /** Called when the last task subscription went. */
    private readonly released: () => void,
  ) {}

  get size(): number {
    return this.subs.size;
  }

  add(sub: TaskSubscription): void {
    this.subs.add(sub);
  }

  remove(sub: TaskSubscription): void {
    this.subs.delete(sub);
    if (this.subs.size > 0) return;
    this.held = null;
    this.released();
  }

  /** Loads the realm's tasks once (changes heard meanwhile are replayed on them). */
  ready(): Promise<void> {
    if (this.held !== null) return Promise.resolve();
    this.load ??= this.loadTasks();
    return this.load;
  }

  private async loadTasks(): Promise<void> {
    try {
      const held = await this.read();
      if (this.subs.size === 0) return;
      this.held = held;
      // Changes heard while loading were noted by the subscriptions: push them now.
      for (const sub of this.subs) if (sub.pending) sub.conn.schedule(sub);
    } finally {
      this.load = null;
    }
  }

  private async read(): Promise<Map<string, TaskRecord>> {
    const heard: TaskChange[] = [];
    this.reads.add(heard);
    let tasks: TaskRecord[];
    try {
      tasks = await this.store.list(this.realm);
    } finally {
      this.reads.delete(heard);
    }
    const held = new Map(tasks.map((task) => [task.id, task]));
    for (const change of heard) {
      if (change.new === null) held.delete(change.id);
      else held.set(change.id, change.new);
    }
    return held;
  }

  /** A `tsk` event of the realm (from any process). */
  changed(change: TaskChange): void {
    for (const heard of this.reads) heard.push(change);
    const held = this.held;
    const before = held === null ? change.old : (held.get(change.id) ?? null);
    if (held !== null) {
      if (change.new === null) held.delete(change.id);
      else held.set(change.id, change.new);
    }
    for (const sub of this.subs) if (sub.readable === null || sub.readable(change.id)) sub.touch(change.id, before);
  }

  /** Reads the tasks again (messages may have been lost) and pushes what differs from the set held. */
  async resync(): Promise<void> {
    if (this.load !== null) await this.load.catch(() => undefined);
    if (this.held === null) return;
    const fresh = await this.read();
    const held = this.held;
    if (held === null) return;
    const changed: [string, TaskRecord | null][] = [];
    for (const [id, task] of fresh) if (!isDeepStrictEqual(held.get(id), task)) changed.push([id, held.get(id) ?? null]);
    for (const [id, task] of held) if (!fresh.has(id)) changed.push([id, task]);
    this.held = fresh;
    for (const [id, before] of changed) {
      for (const sub of this.subs) if (sub.readable === null || sub.readable(id)) sub.touch(id, before);
    }
  }
}
