/**
 * The ChangeFeed over the event bus: the change records every process publishes
 * (change-publisher.ts), this one's included, for one realm. The bus's own subscription per
 * realm (interest-based on NATS) carries them; other events of the realm are passed over.
 */
import type { EventBus } from '../events/port.js';
import type { ChangeFeed, ChangeFeedSubscription, RealmChange } from './change-feed.js';

export class BusChangeFeed implements ChangeFeed {
  constructor(private readonly bus: Pick<EventBus, 'subscribe'>) {}

  subscribe(realm: string, handler: (changes: readonly RealmChange[]) => void): ChangeFeedSubscription {
    return this.bus.subscribe(realm, (message) => {
      if (message.kind !== 'events') return;
      const changes: RealmChange[] = [];
      for (const event of message.events) {
        // The bus event is itself a RealmChange (it only adds the realm): no copy.
        if (event.kind === 'object' || event.kind === 'area') changes.push(event);
      }
      if (changes.length > 0) handler(changes);
    });
  }
}
