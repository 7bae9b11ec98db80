/**
 * The event bus, metered: a decorator of the EventBus port that times each publish of a
 * realm's events and counts the geofence crossings among them (the geofence engine is the
 * one publisher of `ent` and `exi`: what it hands the bus is its output). Delivery lag is
 * measured inside the bus (local-bus.ts `onDelivered`; NATS carries the publish time in a
 * message header), because only the bus knows when a message was published.
 */
import type {
  BusHealth,
  BusSubscription,
  ControlMessage,
  EventBus,
  EventPublishOptions,
  LocusEvent,
  PresenceMessage,
  RealmChangedEvent,
  RealmMessage,
} from '../../events/port.js';
import type { CounterCell, HistogramCell, LeanCounter } from './lean-series.js';
import { RealmCells, type RealmLabels } from './realm-labels.js';

interface Crossings {
  ent: CounterCell;
  exi: CounterCell;
}

export class MeteredBus implements EventBus {
  private readonly crossings: RealmCells<Crossings>;

  /** `realms` null: geofence events have no realm label. */
  constructor(
    private readonly inner: EventBus,
    private readonly publishDuration: HistogramCell,
    geofenceEvents: LeanCounter,
    realms: RealmLabels | null,
  ) {
    this.crossings = new RealmCells(realms, (...realm) => ({ ent: geofenceEvents.cell('ent', ...realm), exi: geofenceEvents.cell('exi', ...realm) }));
  }

  publish(realm: string, events: readonly LocusEvent[], options?: EventPublishOptions): void {
    const started = performance.now();
    this.inner.publish(realm, events, options);
    this.publishDuration.observe((performance.now() - started) / 1000);
    let ent = 0;
    let exi = 0;
    for (let k = 0; k < events.length; k++) {
      const kind = (events[k] as LocusEvent).kind;
      if (kind === 'entered') ent++;
      else if (kind === 'exited') exi++;
    }
    if (ent + exi === 0) return;
    const cells = this.crossings.of(realm);
    if (ent > 0) cells.ent.inc(ent);
    if (exi > 0) cells.exi.inc(exi);
  }

  publishLocal(realm: string, events: readonly LocusEvent[]): void {
    const started = performance.now();
    this.inner.publishLocal(realm, events);
    this.publishDuration.observe((performance.now() - started) / 1000);
  }

  publishRealmDeleted(realm: string): void {
    this.crossings.forget(realm);
    this.inner.publishRealmDeleted(realm);
  }

  subscribe(realm: string, handler: (message: RealmMessage) => void): BusSubscription {
    return this.inner.subscribe(realm, handler);
  }

  publishTenant(tenant: string, event: RealmChangedEvent): void {
    this.inner.publishTenant(tenant, event);
  }

  subscribeTenant(tenant: string, handler: (event: RealmChangedEvent) => void): BusSubscription {
    return this.inner.subscribeTenant(tenant, handler);
  }

  publishControl(message: ControlMessage): void {
    this.inner.publishControl(message);
  }

  subscribeControl(handler: (message: ControlMessage) => void): BusSubscription {
    return this.inner.subscribeControl(handler);
  }

  publishPresence(message: PresenceMessage): void {
    this.inner.publishPresence(message);
  }

  subscribePresence(handler: (message: PresenceMessage) => void): BusSubscription {
    return this.inner.subscribePresence(handler);
  }

  onResync(listener: () => void): BusSubscription {
    return this.inner.onResync(listener);
  }

  health(): BusHealth {
    return this.inner.health();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
