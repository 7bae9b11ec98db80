/**
 * The sendToUrl metrics (instructions/delivery/delivery-queue.ts): outcomes, the time from queue
 * to outcome, and the queue depth, read at scrape time.
 */
import type { DeliveryMetrics, DeliveryOutcome } from '../../instructions/delivery/delivery-queue.js';
import type { CounterCell, HistogramCell } from './lean-series.js';
import type { MetricsRegistry } from './registry.js';

const outcomes: readonly DeliveryOutcome[] = ['success', 'failed', 'refused', 'dropped'];

export function deliveryMetrics(registry: MetricsRegistry): DeliveryMetrics {
  const counted = new Map<DeliveryOutcome, CounterCell>(outcomes.map((o) => [o, registry.counters.sendToUrlDeliveries.cell(o)]));
  const timed = new Map<DeliveryOutcome, HistogramCell>();
  return {
    settled(outcome, seconds) {
      counted.get(outcome)?.inc();
      if (seconds === null) return;
      let cell = timed.get(outcome);
      if (cell === undefined) {
        cell = registry.histograms.sendToUrlDuration.cell(outcome);
        timed.set(outcome, cell);
      }
      cell.observe(seconds);
    },
  };
}

/** The queue depth gauge reads `depth()` at every scrape. */
export function collectQueueDepth(registry: MetricsRegistry, queue: { depth(): number }): void {
  registry.collectGauge('sendToUrlQueueDepth', (gauge) => gauge.set(queue.depth()));
}
