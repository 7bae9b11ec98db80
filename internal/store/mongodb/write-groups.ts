/**
 * Group commit for the MongoDB store: the writes that callers start while earlier ones are
 * being sent (many connections, each with one update) are collected per key (a realm) and
 * handed to `send` together, so that a group costs the round trips of one write. Each
 * caller gets its own outcome: a group may fail for some callers and not for others.
 *
 * What may share a group is the caller's business: the object store queues writes to one
 * object (keyed-queue.ts), so the items of one group never write the same object.
 */
export type GroupOutcome<R> = PromiseSettledResult<R>;

interface Waiting<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

export class WriteGroups<I, R> {
  private pending = new Map<string, Waiting<I, R>[]>();
  private sending = 0;
  private scheduled = false;

  /**
   * `send` writes one key's items and returns an outcome per item, in order (it may also
   * throw: every item then fails). At most `inFlight` rounds of groups are sent at once;
   * the items added meanwhile wait and go together in the next round.
   */
  constructor(
    private readonly send: (key: string, items: readonly I[]) => Promise<GroupOutcome<R>[]>,
    private readonly inFlight: number,
  ) {}

  add(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let waiting = this.pending.get(key);
      if (waiting === undefined) {
        waiting = [];
        this.pending.set(key, waiting);
      }
      waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.sending >= this.inFlight || this.pending.size === 0) return;
    this.scheduled = true;
    // After the current turn of the event loop: the messages other connections delivered in
    // the same turn join the group.
    setImmediate(() => {
      this.scheduled = false;
      this.round();
    });
  }

  private round(): void {
    if (this.sending >= this.inFlight || this.pending.size === 0) return;
    const groups = [...this.pending];
    this.pending = new Map();
    this.sending++;
    void Promise.all(groups.map(([key, waiting]) => this.sendGroup(key, waiting))).then(() => {
      this.sending--;
      this.schedule();
    });
  }

  private async sendGroup(key: string, waiting: readonly Waiting<I, R>[]): Promise<void> {
    try {
      const outcomes = await this.send(
        key,
        waiting.map((w) => w.item),
      );
      waiting.forEach((w, i) => {
        const outcome = outcomes[i];
        if (outcome === undefined) w.reject(new Error('a write group returned fewer outcomes than items'));
        else if (outcome.status === 'fulfilled') w.resolve(outcome.value);
        else w.reject(outcome.reason);
      });
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  }
}
