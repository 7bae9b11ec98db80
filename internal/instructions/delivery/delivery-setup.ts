/**
 * The delivery side of the instruction engine, as a process runs it: the instruction log and the
 * sendToUrl queue, built from the configuration, with their metrics when metrics are on.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/config.js';
import type { EventBus } from '../../events/port.js';
import { collectQueueDepth, deliveryMetrics } from '../../observability/metrics/delivery-metrics.js';
import type { MetricsRegistry } from '../../observability/metrics/registry.js';
import { parseAllowList } from './address-ranges.js';
import { DeliveryQueue } from './delivery-queue.js';
import { InstructionLog } from './instruction-log.js';
import { UrlGuard, type Resolver } from './url-guard.js';

export interface DeliveryParts {
  log: InstructionLog;
  queue: DeliveryQueue;
  /** Stops the queue (unfinished deliveries stay in the outbox) and the log's listening. */
  close(): Promise<void>;
}

type DeliveryConfig = Pick<
  Config,
  'sendToUrlAllow' | 'sendToUrlTimeoutMs' | 'sendToUrlRetries' | 'sendToUrlQueue' | 'sendToUrlConcurrency' | 'instructionLogSize'
>;

export function startDelivery(
  config: DeliveryConfig,
  bus: EventBus,
  options: { metrics?: MetricsRegistry | null; logger?: Logger; resolve?: Resolver } = {},
): DeliveryParts {
  const log = new InstructionLog(bus, { size: config.instructionLogSize });
  const registry = options.metrics ?? null;
  const queue = new DeliveryQueue({
    guard: new UrlGuard(parseAllowList(config.sendToUrlAllow), options.resolve),
    log,
    capacity: config.sendToUrlQueue,
    concurrency: config.sendToUrlConcurrency,
    timeoutMs: config.sendToUrlTimeoutMs,
    retries: config.sendToUrlRetries,
    ...(registry === null ? {} : { metrics: deliveryMetrics(registry) }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  if (registry !== null) collectQueueDepth(registry, queue);
  return {
    log,
    queue,
    close: async () => {
      await queue.close();
      log.close();
    },
  };
}
