/**
 * The ordering contract of writes, stated here once (the modules named point here):
 *
 * 1. A connection (transport/actions/session.ts) answers its messages in arrival order. A
 *    message starts once the one before it has begun, not finished: its reads answered,
 *    its writes handed to ObjectService. The events and pushes a message causes are written
 *    after its reply.
 * 2. Within a frame (transport/actions/dispatcher.ts) messages begin in order. A write
 *    (`ordered` handler) waits only for the messages before it to have begun; any other
 *    message waits for them to have settled, so it sees their effects.
 * 3. Writes to the same object (realm and object id) apply in the order they reach
 *    WriteOrder.run (this module; ObjectService calls it for every write and delete, before
 *    its first await); writes to different objects may be under way at once. Nothing orders
 *    writes across connections beyond this: two connections writing one object apply in the
 *    order their messages began.
 * 4. A store adapter (store/port.ts ObjectStore) need only be correct per call: it is never
 *    given two writes of one object at once. SQLite (store/sqlite/group-commit.ts) commits the
 *    writes queued in one turn of the event loop, from every connection, in one transaction,
 *    in the order they were queued; MongoDB (store/mongodb/keyed-queue.ts) runs them as they
 *    come. Either way a write's promise, and so its reply, settles only once it is durable.
 *
 * A per-key queue: each object with a write under way has a tail (a promise that settles when
 * its last write has settled). A write waits for the tails of all its keys, then becomes the
 * new tail of each. It only ever waits for writes that arrived before it, so the waits form no
 * cycle: a batch touching many objects cannot deadlock with another. A write none of whose
 * objects has one under way calls the store at once, in the caller's turn (so writes of one
 * turn still reach the store together). Keys leave the map when their tail settles.
 *
 * Cost on the ingest path: one Map lookup and one Map set per object, and per call one
 * settled-tail promise and one cleanup pass; no promise per object.
 */

/** Settles when `write` has settled, fulfilled either way: what later writes wait for. */
type Tail = Promise<void>;

export class WriteOrder {
  /** Realm → object id → tail of the last write of that object still under way. */
  private readonly tails = new Map<string, Map<string, Tail>>();

  /**
   * Runs `write` (a store call writing the objects `ids` of `realm`) once every earlier write
   * of any of them has settled, at once when there is none; its promise is `write`'s.
   */
  run<T>(realm: string, ids: readonly string[], write: () => Promise<T>): Promise<T> {
    let byId = this.tails.get(realm);
    let first: Tail | undefined;
    let more: Set<Tail> | undefined;
    if (byId !== undefined) {
      for (let i = 0; i < ids.length; i++) {
        const tail = byId.get(ids[i] as string);
        if (tail === undefined || tail === first) continue;
        if (first === undefined) first = tail;
        else (more ??= new Set([first])).add(tail);
      }
    }
    let done: Promise<T>;
    if (first === undefined) done = call(write);
    else if (more === undefined) done = first.then(write);
    else done = Promise.all(more).then(write);
    // Settling, the tail drops the keys it is still the last write of.
    const release = (): void => this.release(realm, ids, tail);
    const tail: Tail = done.then(release, release);
    if (byId === undefined) {
      byId = new Map();
      this.tails.set(realm, byId);
    }
    for (let i = 0; i < ids.length; i++) byId.set(ids[i] as string, tail);
    return done;
  }

  /** Objects with a write under way (for tests and diagnostics). */
  get pending(): number {
    let n = 0;
    for (const byId of this.tails.values()) n += byId.size;
    return n;
  }

  /** Drops the keys whose last write is the one that settled as `tail`. */
  private release(realm: string, ids: readonly string[], tail: Tail): void {
    const byId = this.tails.get(realm);
    if (byId === undefined) return;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      if (byId.get(id) === tail) byId.delete(id);
    }
    if (byId.size === 0) this.tails.delete(realm);
  }
}

/** `write()`, a synchronous throw turned into a rejection. */
function call<T>(write: () => Promise<T>): Promise<T> {
  try {
    return write();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
