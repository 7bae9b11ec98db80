/**
 * Where change records go after a write has been stored: the geofence engine (and so the
 * event bus), and whatever else registers (metrics, tracing). Services call the listener
 * after the store write succeeded and before the reply is written.
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

/**
 * The one change stream of a process: services write to it, listeners register on it. Each
 * change goes to every listener in registration order; a listener that throws is reported
 * to `onError` and the others still get the change (the write itself has succeeded).
 */
export class ChangeStream implements ChangeListener {
  private listeners: readonly ChangeListener[] = [];

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** Registers a listener; the function returned removes it. */
  add(listener: ChangeListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    for (const listener of this.listeners) {
      try {
        listener.objectsChanged(realm, changes);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  areaChanged(realm: string, change: AreaChange): void {
    for (const listener of this.listeners) {
      try {
        listener.areaChanged(realm, change);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  realmDeleted(realm: string): void {
    for (const listener of this.listeners) {
      try {
        listener.realmDeleted(realm);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
