/**
 * Cache invalidation across processes: whoever changes a realm, token, signing key or area
 * announces it as a control message (events/port.ts ControlMessage); every process, this one
 * included, hands it to its caches, which drop what it names. The next lookup reads the
 * store again. An announcement reaches this process's caches at once (a revoked token is
 * refused by the very next request), and the others' through the bus.
 *
 * The bus is at most once: when it says messages may have been lost (EventBus.onResync: a
 * reconnect after an outage), every cache drops everything it holds (level-based repair).
 */
import type { ControlMessage } from '../domain/events.js';
import type { EventBus } from '../events/port.js';

/** A cache that drops what a control message names. */
export interface ControlListener {
  hear(message: ControlMessage): void;
  /** Drops everything held: control messages may have been lost. */
  dropAll(): void;
}

/** Where services announce their changes. */
export interface ControlAnnouncer {
  announce(message: ControlMessage): void;
}

/** For processes whose changes no other process caches (tests, and a CLI without a shared bus). */
export const noAnnouncer: ControlAnnouncer = { announce: () => undefined };

export class ControlChannel implements ControlAnnouncer {
  private listeners: readonly ControlListener[] = [];
  private readonly subscription: { unsubscribe(): void };
  private readonly resync: { unsubscribe(): void };

  constructor(
    private readonly bus: Pick<EventBus, 'publishControl' | 'subscribeControl' | 'onResync'>,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.subscription = bus.subscribeControl((message) => this.deliver(message));
    this.resync = bus.onResync(() => this.dropAll());
  }

  /** Registers a cache. */
  add(listener: ControlListener): void {
    this.listeners = [...this.listeners, listener];
  }

  /** Drops what `message` names here at once, and tells every process through the bus. */
  announce(message: ControlMessage): void {
    this.deliver(message);
    this.bus.publishControl(message);
  }

  close(): void {
    this.subscription.unsubscribe();
    this.resync.unsubscribe();
  }

  /** Every cache drops everything it holds. */
  dropAll(): void {
    for (const listener of this.listeners) {
      try {
        listener.dropAll();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private deliver(message: ControlMessage): void {
    for (const listener of this.listeners) {
      try {
        listener.hear(message);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
