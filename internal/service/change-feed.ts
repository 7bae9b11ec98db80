/**
 * A realm's stored changes as every process hears them: the change records (old, new, time,
 * origin) of every write, from whichever process stored it. Live at most once across processes
 * (the bus); listeners that must not miss anything repair from the store (level-based).
 */
import type { AreaChange, ObjectChange } from '../domain/types.js';

export type RealmChange = { kind: 'object'; change: ObjectChange } | { kind: 'area'; change: AreaChange };

export interface ChangeFeedSubscription {
  unsubscribe(): void;
}

export interface ChangeFeed {
  /** Receives the realm's changes, in the order each process stored them. */
  subscribe(realm: string, handler: (changes: readonly RealmChange[]) => void): ChangeFeedSubscription;
}
