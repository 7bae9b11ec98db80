/**
 * One v1 connection's Hivekit subscriptions and its push cycle: changes mark subscriptions
 * dirty; one timer per connection, armed by the first change of a cycle, drains every dirty
 * subscription into one frame (connection.pushSubscriptions, push-port.ts) `cycleMs` later. One change never yields two
 * pushes, nothing is pushed when nothing changed, and a push never shares the turn (nor the
 * write) of the reply that caused it (hivekit-compat.md 5.4, 12.9).
 */
import type { SubscriberConnection, SubscriptionUpdate } from './push-port.js';

/** A subscription as the push cycle sees it. */
export interface LiveSubscription {
  /** The client-chosen id (unique on its connection). */
  readonly id: string;
  /** Appends this cycle's updates (none when nothing changed) and forgets them. */
  drain(out: SubscriptionUpdate[]): void;
  /** Leaves every index it is in; no push follows. */
  detach(): void;
}

export class ConnectionLive {
  readonly subscriptions = new Map<string, LiveSubscription>();
  private readonly dirty = new Set<LiveSubscription>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly connection: SubscriberConnection,
    private readonly cycleMs: number,
  ) {}

  /** The subscription has something to push: it goes out on the next cycle. */
  schedule(subscription: LiveSubscription): void {
    if (this.closed) return;
    this.dirty.add(subscription);
    if (this.timer === null) {
      this.timer = setTimeout(this.flush, this.cycleMs);
      this.timer.unref();
    }
  }

  /** Drops whatever the subscription had queued (after `del`: nothing more is pushed). */
  unschedule(subscription: LiveSubscription): void {
    this.dirty.delete(subscription);
  }

  /** Writes this cycle's pushes, one frame for all subscriptions. */
  readonly flush = (): void => {
    this.timer = null;
    if (this.dirty.size === 0 || this.closed) return;
    const out: SubscriptionUpdate[] = [];
    for (const subscription of this.dirty) subscription.drain(out);
    this.dirty.clear();
    if (out.length > 0) this.connection.pushSubscriptions(out);
  };

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.dirty.clear();
  }
}
