/**
 * The two construction points of a server's outside world: its store and its event bus. Each
 * is one function of the configuration, so that choosing an adapter by URL (cluster mode:
 * MongoDB, NATS) changes one line here.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { openBus } from '../events/open-bus.js';
import type { EventBus } from '../events/port.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/port.js';

/**
 * The store LOCUS_STORE names, claimed for this process: alone with the local bus, shared
 * with the other API processes of a cluster when the bus is NATS (a SQLite file then takes
 * several writers; docs/operations.md "Several processes on one SQLite file").
 */
export function openServerStore(config: Config, logger: Logger): Promise<Store> {
  return openStore(config.store, {
    claimOwnership: true,
    ownership: config.bus === 'local' ? 'exclusive' : 'shared',
    onBackgroundError: (err) => logger.error({ err }, 'store background work failed; retrying'),
  });
}

/** The event bus LOCUS_BUS names (events/open-bus.ts: `local`, `nats://…`); `onDelivered`: the metrics' delivery lag. */
export function openServerBus(config: Config, logger: Logger, onDelivered?: (lagSeconds: number) => void): Promise<EventBus> {
  return openBus(config.bus, { onError: (err) => logger.error({ err }, 'event delivery failed'), log: logger, ...(onDelivered === undefined ? {} : { onDelivered }) });
}
