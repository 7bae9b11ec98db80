/**
 * The change feed of one process's own writes: a listener of its change stream that hands each
 * realm's change records to the feed's subscribers as they are stored. It carries only what
 * this process stores: enough for one process; with several, the feed must carry every
 * process's records (the bus), and an engine hears the others' writes only from the store when
 * it starts (takeover) or after a bus outage.
 */
import type { AreaChange, ObjectChange } from '../domain/types.js';
import type { ChangeFeed, ChangeFeedSubscription, RealmChange } from './change-feed.js';
import type { ChangeListener } from './changes.js';

type Handler = (changes: readonly RealmChange[]) => void;

export class ProcessChangeFeed implements ChangeFeed, ChangeListener {
  private readonly handlers = new Map<string, Set<Handler>>();

  subscribe(realm: string, handler: Handler): ChangeFeedSubscription {
    let set = this.handlers.get(realm);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(realm, set);
    }
    const handlers = set;
    handlers.add(handler);
    return {
      unsubscribe: () => {
        handlers.delete(handler);
        if (handlers.size === 0 && this.handlers.get(realm) === handlers) this.handlers.delete(realm);
      },
    };
  }

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    const handlers = this.handlers.get(realm);
    if (handlers === undefined) return;
    const records: RealmChange[] = changes.map((change) => ({ kind: 'object', change }));
    for (const handler of handlers) handler(records);
  }

  areaChanged(realm: string, change: AreaChange): void {
    const handlers = this.handlers.get(realm);
    if (handlers === undefined) return;
    for (const handler of handlers) handler([{ kind: 'area', change }]);
  }

  realmDeleted(): void {
    // The lease keeper lets a deleted realm go (it has no instructions any more).
  }
}
