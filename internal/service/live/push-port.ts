/**
 * The push port of Hivekit subscriptions: what service/live hands a subscriber's connection
 * once per push cycle, as domain changes (objects, areas, tasks, realm data, realm events,
 * instructions, instruction log events), never as a
 * wire form. The v1 session implements it and writes the v1 messages
 * (transport/actions/subscription-pushes.ts); service/live decides only who gets what.
 */
import type { InstructionLogEvent, RealmChangedEvent } from '../../domain/events.js';
import type { InstructionRecord } from '../../domain/instruction.js';
import type { TaskRecord } from '../../domain/task.js';
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
  /**
   * Tasks: `full`, the whole set the subscriber may read (in `created`, the others empty); else
   * the tasks that were created, changed and deleted (as the subscriber last had them).
   */
  | {
      kind: 'tasks';
      subscription: string;
      full: boolean;
      created: readonly TaskRecord[];
      updated: readonly TaskRecord[];
      deleted: readonly TaskRecord[];
    }
  /** The realm's label and data (`realm`: the name its tenant knows). */
  | { kind: 'realmData'; subscription: string; realm: string; label: string | null; data: RealmData }
  /** A realm of the tenant was created, changed or deleted (`realm`: the name its tenant knows). */
  | { kind: 'realmEvent'; subscription: string; realm: string; act: RealmChangedEvent['act'] }
  /** Instructions: always the whole set the subscriber may read. */
  | { kind: 'instructions'; subscription: string; instructions: readonly InstructionRecord[] }
  /** Instruction log events since the previous push, oldest first (possibly none after `exe`). */
  | { kind: 'log'; subscription: string; entries: readonly InstructionLogEvent['entry'][] };

/** A connection that Hivekit subscriptions push to. */
export interface SubscriberConnection extends LiveConnection {
  /** Queues this cycle's updates for the connection's next push frame (never the frame of a reply). */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void;
}
