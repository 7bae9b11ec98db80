/**
 * Hivekit subscriptions without sockets: a real SQLite store (in memory), the real services,
 * geofence engine and local bus, the real LiveSubscriptions engine, and fake V1Connections
 * that record what is pushed to them (one entry per frame). The layer above the socket port:
 * what a WebSocket session would write, frame by frame.
 */
import type { Principal } from '../../internal/auth/principal.js';
import { defaultRealmSettings } from '../../internal/domain/realm-settings.js';
import type { Realm } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { GeofenceEngine } from '../../internal/geofence/geofence-engine.js';
import { AreaService } from '../../internal/service/areas.js';
import { ChangePublisher } from '../../internal/service/change-publisher.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { LiveSubscriptions, type RealmRef } from '../../internal/service/live/live-subscriptions.js';
import { ObjectService } from '../../internal/service/objects.js';
import type { PresenceLookup } from '../../internal/service/presence-port.js';
import { openStore } from '../../internal/store/open-store.js';
import type { Store } from '../../internal/store/port.js';
import type { SubscriptionUpdate } from '../../internal/service/live/push-port.js';
import { subscriptionMessages } from '../../internal/transport/actions/subscription-pushes.js';
import type { V1Connection } from '../../internal/transport/actions/v1-handler.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const principal = (tenant = 'default', realm: string | null = null): Principal => ({
  tokenId: 'jwt:test',
  kind: 'jwt',
  tenant,
  realm,
  scope: 'admin',
});

export class FakeConnection implements V1Connection {
  private static next = 1;
  readonly id = `fake-${FakeConnection.next++}`;
  /** Every push, one entry per frame. */
  readonly frames: object[][] = [];
  private readonly closers: (() => void)[] = [];
  constructor(readonly principal: Principal = principalOf()) {}
  push(messages: readonly object[]): void {
    this.frames.push([...messages]);
  }
  /** As the v1 session does: the updates' v1 messages, one push. */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void {
    this.push(subscriptionMessages(updates));
  }
  onClose(listener: () => void): void {
    this.closers.push(listener);
  }
  close(): void {
    for (const fn of this.closers.splice(0)) fn();
  }
  /** All pushed messages, frames flattened, and forgets them. */
  take(): Record<string, unknown>[] {
    const all = this.frames.flat() as Record<string, unknown>[];
    this.frames.length = 0;
    return all;
  }
}

function principalOf(): Principal {
  return principal();
}

export interface LiveFixture {
  store: Store;
  bus: LocalEventBus;
  /** The ChangeListener of the services, as they register it: the change records onto the bus, then the crossings. */
  engine: ChangeStream;
  objects: ObjectService;
  areas: AreaService;
  live: LiveSubscriptions;
  realm: Realm;
  ref: RealmRef;
  /** Presence the engine asks for cst: set `status.set(id, 'con')`. */
  status: Map<string, 'con' | 'dis'>;
  close(): Promise<void>;
}

export async function liveFixture(options: { cycleMs?: number; maxPerConnection?: number } = {}): Promise<LiveFixture> {
  const store = await openStore('sqlite::memory:');
  const now = new Date().toISOString();
  const { realm } = await store.realms.put('r', { ...defaultRealmSettings }, now);
  const bus = new LocalEventBus((err) => {
    throw err;
  });
  const engine = new ChangeStream((err) => {
    throw err;
  });
  engine.add(new ChangePublisher(bus));
  engine.add(new GeofenceEngine(store.areas, bus));
  const clock = (): number => Date.now();
  const objects = new ObjectService(store, clock, { maxBulk: 10_000, maxPage: 10_000, maxFilterConditions: 100, maxVertices: 1000, maxFutureSkewS: 300 }, engine);
  const areas = new AreaService(store, { maxPage: 10_000, maxVertices: 1000 }, engine);
  const status = new Map<string, 'con' | 'dis'>();
  const presence: PresenceLookup = { statusOf: (_realm, id) => status.get(id) ?? 'dis' };
  const live = new LiveSubscriptions(
    { bus, objects: store.objects, areas: store.areas, tasks: store.tasks, realms: store.realms, presence },
    { maxVertices: 1000, maxConditions: 100, cycleMs: options.cycleMs ?? 10, ...(options.maxPerConnection === undefined ? {} : { maxPerConnection: options.maxPerConnection }) },
  );
  const ref: RealmRef = { key: realm.id, name: realm.id, tenant: 'default', label: realm.label, data: realm.data };
  return {
    store,
    bus,
    engine,
    objects,
    areas,
    live,
    realm,
    ref,
    status,
    close: async () => {
      await bus.close();
      await store.close();
    },
  };
}
