/**
 * Group commit: the writes asked for in one turn of the event loop share one transaction
 * (where this stands in the ordering contract of writes: service/write-order.ts).
 *
 * A commit costs about as much as the writes of several objects: each dirty page goes to
 * the WAL whole, and the commit record with it. Two hundred trackers that each send one
 * fix over their own connection make two hundred commits a turn without this; with it,
 * one.
 *
 * A write that fails still fails alone: when any write of a group throws (or the commit
 * fails), the group's transaction is rolled back and its writes run again one by one, each
 * in a transaction of its own, so that only those that fail on their own reject. Failures
 * are rare (the callers validate first), so this costs nothing in the common case; a
 * savepoint per write would instead copy every page it changes to a statement journal
 * (which spills to a temporary file past 64 KiB: 60% more bytes written per update,
 * measured with batches of 1,000). An error that is not one write's own (`retryAlone`
 * false: a busy or full database, an I/O error) fails the whole group at once: retried
 * one by one, a database locked by another process would keep the event loop waiting
 * for the busy timeout once per write.
 *
 * Writes run in the order they were asked for, and an operation that must follow them
 * (a delete, a realm delete, closing the store) runs flush() first. A group stops growing
 * past `maxWeight` (patches), so that one turn's writes do not make one huge transaction.
 */
import type { Database, Transaction } from 'better-sqlite3';

export interface GroupCommitOptions<I, W, R> {
  /** One write, inside the group's transaction (a throw rolls the group back). */
  write: (input: I) => W;
  /** After the commit, for each write that succeeded, in order: its result. */
  committed: (work: W) => R;
  /**
   * At the start of each group's transaction, once it holds the write lock (no other
   * connection commits until it ends): state held in memory is checked against the file.
   */
  begin: () => void;
  /** After a group's transaction was rolled back (state the group's writes held in memory goes). */
  rolledBack: () => void;
  /** The error a caller sees. */
  translate: (err: unknown) => unknown;
  /** Whether an error may be one write's own, so that the group's writes are run again alone. */
  retryAlone: (err: unknown) => boolean;
  /** How much of a group an input is; a group takes no more inputs once it reaches maxWeight. */
  weight: (input: I) => number;
  maxWeight: number;
}

interface Member<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<I, W, R> {
  private queue: Member<I, R>[] = [];
  private scheduled = false;
  /** BEGIN IMMEDIATE: the write lock first (waiting the busy timeout for it), then the writes' reads. */
  private readonly groupTx: Transaction<(members: readonly Member<I, R>[]) => W[]>;

  constructor(
    db: Database,
    private readonly options: GroupCommitOptions<I, W, R>,
  ) {
    this.groupTx = db.transaction((members: readonly Member<I, R>[]) => {
      options.begin();
      return members.map((member) => options.write(member.input));
    });
  }

  /** Queues a write; it runs with the others of this turn, and settles after their commit. */
  submit(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  /** Writes queued and not yet run. */
  get pending(): number {
    return this.queue.length;
  }

  /** Runs every queued write now (before an operation that must follow them). */
  flush(): void {
    while (this.queue.length > 0) {
      let count = 0;
      let weight = 0;
      for (const member of this.queue) {
        if (count > 0 && weight >= this.options.maxWeight) break;
        weight += this.options.weight(member.input);
        count++;
      }
      const members = this.queue.slice(0, count);
      this.queue = this.queue.slice(count);
      this.run(members);
    }
  }

  private run(members: readonly Member<I, R>[]): void {
    let works: W[];
    try {
      works = this.groupTx.immediate(members);
    } catch (err) {
      // Rolled back: nothing of the group is kept.
      this.options.rolledBack();
      if (members.length > 1 && this.options.retryAlone(err)) {
        // Each write again, alone: only those that fail on their own fail.
        for (const member of members) this.run([member]);
        return;
      }
      const error = this.options.translate(err);
      for (const member of members) member.reject(error);
      return;
    }
    members.forEach((member, index) => {
      try {
        member.resolve(this.options.committed(works[index] as W));
      } catch (err) {
        member.reject(this.options.translate(err));
      }
    });
  }
}
