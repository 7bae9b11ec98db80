/**
 * The push port of Hivekit subscriptions: what service/live hands a subscriber's connection
 * once per push cycle, as domain changes (objects, areas, realm data, realm events), never as a
 * wire form. The v1 session implements it and writes the v1 messages
 * (transport/actions/subscription-pushes.ts); service/live decides only who gets what.
 */
import type { RealmChangedEvent } from '../../domain/events.js';
import type { Area, ConnectionStatus, RealmData, TrackedObject } from '../../domain/types.js';
import type { LiveConnection } from '../live-connection.js';

/** What one subscription has to tell its subscriber this cycle. */
export type SubscriptionUpdate =
  /**
   * Objects: `full`, the whole current set (in `created`, the others empty); else the objects
   * that joined the set, changed in it, and left it (as the subscriber last had them), each in
   * the order they were touched. `statusOf` gives an object's presence now.
   */
  | {
      kind: 'objects';
      subscription: string;
      full: boolean;
      created: readonly TrackedObject[];
      updated: readonly TrackedObject[];
      deleted: readonly TrackedObject[];
      statusOf: (id: string) => ConnectionStatus;
    }
  /** Areas: always the whole set the subscriber may read. */
  | { kind: 'areas'; subscription: string; areas: readonly Area[] }
  /** The realm's label and data (`realm`: the name its tenant knows). */
  | { kind: 'realmData'; subscription: string; realm: string; label: string | null; data: RealmData }
  /** A realm of the tenant was created, changed or deleted (`realm`: the name its tenant knows). */
  | { kind: 'realmEvent'; subscription: string; realm: string; act: RealmChangedEvent['act'] };

/** A connection that Hivekit subscriptions push to. */
export interface SubscriberConnection extends LiveConnection {
  /** Queues this cycle's updates for the connection's next push frame (never the frame of a reply). */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void;
}
