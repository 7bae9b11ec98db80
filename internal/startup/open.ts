/**
 * The two construction points of a server's outside world: its store and its event bus. Each
 * is one function of the configuration, so that choosing an adapter by URL (cluster mode:
 * MongoDB, NATS) changes one line here.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Tracing } from '../observability/tracing/tracing.js';
import { openBus } from '../events/open-bus.js';
import type { EventBus } from '../events/port.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/port.js';

/**
 * The store LOCUS_STORE names, claimed for this process: alone with the local bus, shared
 * with the other API processes of a cluster when the bus is NATS (a SQLite file then takes
 * several writers; docs/operations.md "Several processes on one SQLite file").
 */
export async function openServerStore(config: Config, logger: Logger, tracing: Tracing | null = null): Promise<Store> {
  const store = await openStore(config.store, {
    claimOwnership: true,
    ownership: config.bus === 'local' ? 'exclusive' : 'shared',
    onBackgroundError: (err) => logger.error({ err }, 'store background work failed; retrying'),
  });
  return tracing === null ? store : tracing.store(store);
}

/**
 * The event bus LOCUS_BUS names (events/open-bus.ts: `local`, `nats://…`); traced when tracing is
 * on; `onDelivered`: the metrics' delivery lag.
 */
export async function openServerBus(config: Config, logger: Logger, tracing: Tracing | null = null, onDelivered?: (lagSeconds: number) => void): Promise<EventBus> {
  const bus = await openBus(config.bus, {
    onError: (err) => logger.error({ err }, 'event delivery failed'),
    log: logger,
    ...(tracing === null ? {} : { tracing: tracing.bus }),
    ...(onDelivered === undefined ? {} : { onDelivered }),
  });
  return tracing === null ? bus : tracing.eventBus(bus);
}
