/**
 * The in-process event bus (`LOCUS_BUS=local`): embedded mode, one process. Publishing
 * only appends to a queue; the queue is delivered on the next turn of the event loop,
 * in publish order, so a writer never waits for subscribers and its reply goes out first.
 */
import type { BusSubscription, EventBus, LocusEvent, RealmMessage } from './port.js';

type Handler = (message: RealmMessage) => void;

export class LocalEventBus implements EventBus {
  private readonly handlers = new Map<string, Set<Handler>>();
  private queue: { realm: string; message: RealmMessage }[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private idle: (() => void) | null = null;

  /** `onError` hears of a handler that threw; the other handlers still get the message. */
  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  publish(realm: string, events: readonly LocusEvent[]): void {
    if (events.length > 0) this.enqueue(realm, { kind: 'events', events });
  }

  publishRealmDeleted(realm: string): void {
    this.enqueue(realm, { kind: 'realm_deleted' });
  }

  subscribe(realm: string, handler: Handler): BusSubscription {
    let set = this.handlers.get(realm);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(realm, set);
    }
    set.add(handler);
    return {
      unsubscribe: () => {
        const current = this.handlers.get(realm);
        if (current === undefined) return;
        current.delete(handler);
        if (current.size === 0) this.handlers.delete(realm);
      },
    };
  }

  close(): Promise<void> {
    if (this.scheduled === null) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle = resolve;
    });
  }

  private enqueue(realm: string, message: RealmMessage): void {
    // Nobody listens to this realm here: nothing to deliver (a NATS adapter would still publish).
    if (!this.handlers.has(realm)) return;
    this.queue.push({ realm, message });
    this.scheduled ??= setImmediate(() => this.drain());
  }

  private drain(): void {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = null;
    for (const { realm, message } of batch) {
      const set = this.handlers.get(realm);
      if (set === undefined) continue;
      for (const handler of [...set]) {
        try {
          handler(message);
        } catch (err) {
          this.onError(err);
        }
      }
    }
    if (this.scheduled === null && this.idle !== null) {
      const resolve = this.idle;
      this.idle = null;
      resolve();
    }
  }
}
