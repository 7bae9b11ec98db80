/**
 * Group commit: the writes asked for in one turn of the event loop share one transaction.
 *
 * A commit costs about as much as the writes of several objects: each dirty page goes to
 * the WAL whole, and the commit record with it. Two hundred trackers that each send one
 * fix over their own connection make two hundred commits a turn without this; with it,
 * one. Each write runs in a savepoint of the group's transaction (its function is a
 * better-sqlite3 transaction function, which nests as a SAVEPOINT), so a write that fails
 * is undone alone and rejects alone; the others commit. Should the group's transaction
 * itself fail (the COMMIT, or an error after which SQLite has rolled everything back, such
 * as a full disk), every write of the group rejects and nothing of it is kept.
 *
 * Writes run in the order they were asked for, and an operation that must follow them
 * (a delete, a realm delete, closing the store) runs flush() first. A group stops growing
 * past `maxWeight` (patches), so that one turn's writes do not make one huge transaction.
 */
import type { Database } from 'better-sqlite3';

export interface GroupCommitOptions<I, W, R> {
  /**
   * One write, inside the group's transaction. It must be a transaction function of the
   * database (it then runs in a savepoint): a throw undoes it alone.
   */
  write: (input: I) => W;
  /** After the commit, for each write that succeeded, in order: its result. */
  committed: (work: W) => R;
  /** Before each group's transaction. */
  begin: () => void;
  /** After each group, committed or not (state held for the group's writes goes). */
  ended: () => void;
  /** The error a caller sees. */
  translate: (err: unknown) => unknown;
  /** How much of a group an input is; a group takes no more inputs once it reaches maxWeight. */
  weight: (input: I) => number;
  maxWeight: number;
}

interface Member<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

type Outcome<W> = { work: W } | { error: unknown };

export class GroupCommit<I, W, R> {
  private queue: Member<I, R>[] = [];
  private scheduled = false;
  private readonly groupTx: (members: readonly Member<I, R>[], outcomes: Outcome<W>[]) => void;

  constructor(
    private readonly db: Database,
    private readonly options: GroupCommitOptions<I, W, R>,
  ) {
    this.groupTx = db.transaction((members: readonly Member<I, R>[], outcomes: Outcome<W>[]) => {
      for (const member of members) {
        try {
          outcomes.push({ work: options.write(member.input) });
        } catch (error) {
          // SQLite ended the whole transaction (it does on some errors): the group fails.
          if (!this.db.inTransaction) throw error;
          outcomes.push({ error });
        }
      }
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
    const outcomes: Outcome<W>[] = [];
    try {
      this.options.begin();
      this.groupTx(members, outcomes);
    } catch (err) {
      this.options.ended();
      const error = this.options.translate(err);
      for (const member of members) member.reject(error);
      return;
    }
    members.forEach((member, index) => {
      const outcome = outcomes[index] as Outcome<W>;
      if ('error' in outcome) {
        member.reject(this.options.translate(outcome.error));
        return;
      }
      try {
        member.resolve(this.options.committed(outcome.work));
      } catch (err) {
        member.reject(this.options.translate(err));
      }
    });
    this.options.ended();
  }
}
