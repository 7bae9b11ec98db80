/**
 * The services of one API process, on its store and bus: change stream (its listeners: the
 * publisher of change records, geofencing, metrics), the change feed, caches told through
 * control messages, realms, tenants, access, objects, areas, instructions (and the runtime that
 * evaluates them, with its delivery queue and log), presence, pub/sub and subscriptions.
 */
import type { Logger } from 'pino';
import { Authenticator } from '../auth/authenticator.js';
import { HeldSigningKeys, HeldTokens } from '../auth/held-lookups.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import type { Config } from '../config/config.js';
import type { EventBus } from '../events/port.js';
import { GeofenceEngine } from '../geofence/geofence-engine.js';
import { startDelivery, type DeliveryParts } from '../instructions/delivery/delivery-setup.js';
import { noObserver, type InstructionObserver } from '../instructions/engine/engine-observer.js';
import { defaultProcessId, InstructionRuntime } from '../instructions/engine/instruction-runtime.js';
import { compileInstruction } from '../instructions/language/compile.js';
import type { MetricsRegistry } from '../observability/metrics/registry.js';
import type { Tracing } from '../observability/tracing/tracing.js';
import { Access } from '../service/access.js';
import { AreaService } from '../service/areas.js';
import { BusChangeFeed } from '../service/bus-change-feed.js';
import type { ChangeFeed } from '../service/change-feed.js';
import { ChangePublisher } from '../service/change-publisher.js';
import { ChangeStream, type ChangeListener } from '../service/changes.js';
import type { Clock } from '../service/clock.js';
import { ControlChannel } from '../service/control.js';
import { InstructionService } from '../service/instructions.js';
import { LiveSubscriptions } from '../service/live/live-subscriptions.js';
import { ObjectService } from '../service/objects.js';
import { PresenceRegistry } from '../service/presence-registry.js';
import { PubSub } from '../service/pubsub.js';
import { RealmService } from '../service/realms.js';
import { Subscriptions } from '../service/subscriptions.js';
import { TaskService } from '../service/tasks.js';
import { TenantService } from '../service/tenants.js';
import type { Store } from '../store/port.js';

export interface Services {
  readonly store: Store;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly control: ControlChannel;
  readonly presence: PresenceRegistry;
  readonly pubsub: PubSub;
  readonly realms: RealmService;
  readonly tenants: TenantService;
  readonly access: Access;
  readonly objects: ObjectService;
  readonly areas: AreaService;
  readonly instructions: InstructionService;
  readonly tasks: TaskService;
  /** Evaluates the instructions of the realms whose lease this process holds; start() it once the process serves. */
  readonly instructionRuntime: InstructionRuntime;
  /** The sendToUrl queue and the instruction log. */
  readonly delivery: DeliveryParts;
  readonly subscriptions: Subscriptions;
  readonly live: LiveSubscriptions;
  /** Every process's change records, per realm. */
  readonly changeFeed: ChangeFeed;
  /** Null while tracing is off. */
  readonly tracing: Tracing | null;
}

export function buildServices(
  config: Config,
  store: Store,
  bus: EventBus,
  clock: Clock,
  logger: Logger,
  tracing: Tracing | null = null,
  metrics?: ChangeListener,
  instructionMetrics: { registry: MetricsRegistry; observer: InstructionObserver } | null = null,
): Services {
  const pubsub = new PubSub(bus);
  // Presence claims name realms as their tenant knows them: resolved within the principal's tenant.
  const presence: PresenceRegistry = new PresenceRegistry({
    bus,
    objects: store.objects,
    resolveRealm: async (principal, name): Promise<{ key: string } | null> => {
      const realm = await realms.findIn(principal.tenant, name);
      return realm === null ? null : { key: realm.id };
    },
    onError: (err) => logger.error({ err }, 'presence transition failed'),
    onTruncated: (realm, limit) => logger.warn({ realm, limit }, 'presence change touched more objects than it announces'),
  });
  // Every stored change goes to the change stream. Its records go on the bus first, then the
  // crossings they cause: a subscriber sees a write before the crossings of it.
  const changes = new ChangeStream((err) => logger.error({ err }, 'a change listener failed'));
  changes.add(new ChangePublisher(bus));
  const geofence = new GeofenceEngine(store.areas, bus, (err, realm) => logger.error({ err, realm }, 'loading areas for geofences failed'));
  changes.add(geofence);
  if (metrics !== undefined) changes.add(metrics);
  // Every process's change records, from the bus: what the instruction engine evaluates.
  const changeFeed = new BusChangeFeed(bus);
  // Caches are told of changes (by any process) through control messages on the bus.
  const control = new ControlChannel(bus, (err) => logger.error({ err }, 'a cache failed to drop an entry'));
  const realms = new RealmService(store, clock, changes, bus, control);
  const heldTokens = new HeldTokens(store.tokens, clock);
  const heldKeys = new HeldSigningKeys(store.signingKeys, clock);
  for (const cache of [realms, heldTokens, heldKeys, geofence]) control.add(cache);
  const authenticator = new Authenticator(heldTokens, config.adminToken, { signingKeys: heldKeys, jwtSecret: config.jwtSecret, clock });
  const { rateLimit, rateBurst, authFailureRate, authFailureBurst } = config;
  const access = new Access(authenticator, realms, new RateLimiter(), { rateLimit, rateBurst, authFailureRate, authFailureBurst }, clock);
  const { maxBulk, maxPage, maxFilterConditions, maxVertices, maxFutureSkewS } = config;
  const live = new LiveSubscriptions(
    {
      bus,
      objects: store.objects,
      areas: store.areas,
      tasks: store.tasks,
      realms: store.realms,
      instructions: store.instructions,
      presence,
      onError: (err) => logger.error({ err }, 'subscription update failed'),
    },
    { maxVertices, maxConditions: maxFilterConditions },
  );
  const objects = new ObjectService(store, clock, { maxBulk, maxPage, maxFilterConditions, maxVertices, maxFutureSkewS }, changes, presence);
  const areas = new AreaService(store, { maxPage, maxVertices }, changes, control);
  const delivery = startDelivery(config, bus, { metrics: instructionMetrics?.registry ?? null, logger });
  const instructionRuntime = new InstructionRuntime({
    processId: config.processId ?? defaultProcessId(),
    store,
    feed: changeFeed,
    bus,
    findRealm: (key) => realms.find(key),
    compile: compileInstruction,
    objects,
    areas,
    delivery: delivery.queue,
    log: delivery.log,
    observer: instructionMetrics?.observer ?? noObserver,
    settings: {
      leaseTtlMs: config.instructionLeaseTtlMs,
      leaseRenewMs: config.instructionLeaseRenewMs,
      maxDepth: config.instructionMaxDepth,
      repairMs: config.instructionRepairMs,
      batchMs: config.instructionBatchMs,
      maxFailures: config.instructionMaxFailures,
      maxEntries: config.instructionMaxEntries,
      pageSize: maxPage,
    },
    clock,
    logger,
  });
  // The instruction service tells this process's runtime at once (a realm's first instruction
  // is taken up without waiting for the next lease round); other processes hear the bus event.
  const instructionBus: Pick<EventBus, 'publish'> = {
    publish: (realm, events) => {
      bus.publish(realm, events);
      for (const event of events) if (event.kind === 'ins') instructionRuntime.instructionChanged(realm, event.id);
    },
  };
  // Level-based repair: when the bus may have lost messages, the caches have dropped what they
  // hold (ControlChannel), and the live subscriptions are read again from the store.
  bus.onResync(() => {
    const started = Date.now();
    presence.resync();
    // The realms' engines read their realms again from the store and fire the differences.
    instructionRuntime.resync();
    live.resync().then(
      (subscriptions) => logger.info({ subscriptions, ms: Date.now() - started }, 'live subscriptions read again from the store after a bus outage'),
      (err: unknown) => logger.error({ err }, 'live subscriptions could not be read again after a bus outage'),
    );
  });
  return {
    store,
    bus,
    clock,
    control,
    presence,
    pubsub,
    realms,
    tenants: new TenantService(store, clock, control),
    access,
    objects,
    areas,
    instructions: new InstructionService(store.instructions, compileInstruction, instructionBus, clock, {
      maxSourceChars: config.instructionMaxSourceChars,
      maxPerRealm: config.instructionMaxPerRealm,
    }),
    // Task changes go straight to the bus: they reach the task subscriptions of every process.
    tasks: new TaskService(store, clock, bus),
    instructionRuntime,
    delivery,
    subscriptions: new Subscriptions(bus, presence),
    live,
    changeFeed,
    tracing,
  };
}
