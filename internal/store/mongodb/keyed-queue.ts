/**
 * Runs tasks keyed by sets of keys so that two tasks sharing a key run in the order they
 * were submitted, and tasks with disjoint keys run concurrently. The ordering of object
 * writes is the service's (the contract: service/write-order.ts); the store port asks only
 * that each call be correct on its own. The object store still queues its writes here by
 * (realm, object id): it is what a realm delete waits for (MongoObjectStore.settle), and a
 * caller that bypasses the service (a test, a tool) gets no overlapping writes of one object.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const before: Promise<unknown>[] = [];
    for (const key of keys) {
      const tail = this.tails.get(key);
      if (tail !== undefined) before.push(tail);
    }
    const settledBefore = before.length === 0 ? Promise.resolve() : Promise.allSettled(before);
    const result = settledBefore.then(task);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    for (const key of keys) this.tails.set(key, done);
    void done.then(() => {
      for (const key of keys) if (this.tails.get(key) === done) this.tails.delete(key);
    });
    return result;
  }

  /** Resolves once every task submitted so far has settled (not those submitted meanwhile). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.tails.values()]);
  }
}
