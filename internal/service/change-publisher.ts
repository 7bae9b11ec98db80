/**
 * The change records of this process's writes, onto the event bus: a listener of the change
 * stream like any other. Each record travels whole (old, new, history, time, origin), so that
 * every process derives what it needs from the same record (Hivekit subscriptions, the `evt`
 * model, instructions through the ChangeFeed) and nothing is recomputed or re-read. One
 * write's records go in one publish call: one bus message of them, whatever their number.
 *
 * Registered before the geofence engine, so that a change record is published before the
 * crossings it causes.
 */
import type { ObjectChangedEvent } from '../domain/events.js';
import type { AreaChange, ObjectChange } from '../domain/types.js';
import type { EventBus } from '../events/port.js';
import type { ChangeListener } from './changes.js';

export class ChangePublisher implements ChangeListener {
  constructor(private readonly bus: Pick<EventBus, 'publish' | 'publishRealmDeleted'>) {}

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    if (changes.length === 0) return;
    const events = new Array<ObjectChangedEvent>(changes.length);
    for (let i = 0; i < changes.length; i++) events[i] = { kind: 'object', realm, change: changes[i] as ObjectChange };
    // Named by the change list: the geofence engine's crossings of it join this publish.
    this.bus.publish(realm, events, { as: changes });
  }

  areaChanged(realm: string, change: AreaChange): void {
    this.bus.publish(realm, [{ kind: 'area', realm, change }]);
  }

  realmDeleted(realm: string): void {
    this.bus.publishRealmDeleted(realm);
  }
}
