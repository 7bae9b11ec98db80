/**
 * Where change records go after a write has been stored: the geofence engine, the
 * event bus and metrics consume them. Services call the listener after the store
 * write succeeded and before the reply is written.
 */
import type { AreaChange, ObjectChange } from '../domain/types.js';

export interface ChangeListener {
  objectsChanged(realm: string, changes: readonly ObjectChange[]): void;
  areaChanged(realm: string, change: AreaChange): void;
  realmDeleted(realm: string): void;
}

/** For processes that serve no subscribers (the admin CLI). */
export const noChangeListener: ChangeListener = {
  objectsChanged: () => undefined,
  areaChanged: () => undefined,
  realmDeleted: () => undefined,
};
