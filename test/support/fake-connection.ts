/** A live connection without a socket: records what is pushed, closes on demand (pub/sub and presence tests). */
import { defaultTenant, type DataProviderClaims, type Principal } from '../../internal/auth/principal.js';
import type { SubscriberConnection, SubscriptionUpdate } from '../../internal/service/live/push-port.js';
import { subscriptionMessages } from '../../internal/transport/actions/subscription-pushes.js';

let next = 0;

export function principalWith(dataProvider: DataProviderClaims | null = null, overrides: Partial<Principal> = {}): Principal {
  return { tokenId: 'jwt:test:device', kind: 'jwt', tenant: defaultTenant, realm: null, scope: 'admin', dataProvider, ...overrides };
}

export class FakeConnection implements SubscriberConnection {
  readonly id = `fake-${++next}`;
  /** Every message pushed, in order. */
  readonly pushed: object[] = [];
  /** How many push calls (frames) there were. */
  pushes = 0;
  closed = false;
  private readonly listeners: (() => void)[] = [];

  constructor(readonly principal: Principal = principalWith()) {}

  /** Records even after close, so that a test sees a push to a closed connection. */
  push(messages: readonly object[]): void {
    this.pushes++;
    this.pushed.push(...messages);
  }

  /** As the v1 session does: the updates' v1 messages, one push. */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void {
    this.push(subscriptionMessages(updates));
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners.splice(0)) listener();
  }

  /** Takes what was pushed so far. */
  take(): object[] {
    return this.pushed.splice(0);
  }
}

/** Resolves after the event loop has run the bus's delivery turn (LocalEventBus delivers on setImmediate). */
export function busTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
