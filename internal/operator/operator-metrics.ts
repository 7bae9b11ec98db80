/** The operator's own prom-client registry, from OPERATOR_METRICS (observability/metric-catalogue.ts), default metrics included. */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OPERATOR_METRICS } from '../observability/metric-catalogue.js';
import { LINT_FAILING_DEFAULTS } from '../observability/metrics/registry.js';

export interface OperatorMetrics {
  readonly registry: Registry;
  reconciled(result: 'success' | 'error' | 'requeue', seconds: number): void;
  queueDepth(depth: number): void;
  leader(leading: boolean): void;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // As the API processes do (observability/metrics/registry.ts): gauges named like counters fail promtool's lint.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);
  const m = OPERATOR_METRICS;
  const reconciles = new Counter({ name: m.reconciles.name, help: m.reconciles.help, labelNames: [...m.reconciles.labels], registers: [registry] });
  const errors = new Counter({ name: m.reconcileErrors.name, help: m.reconcileErrors.help, registers: [registry] });
  const duration = new Histogram({ name: m.reconcileDuration.name, help: m.reconcileDuration.help, buckets: [...m.reconcileDuration.buckets], registers: [registry] });
  const depth = new Gauge({ name: m.queueDepth.name, help: m.queueDepth.help, registers: [registry] });
  const leader = new Gauge({ name: m.leader.name, help: m.leader.help, registers: [registry] });
  // Every result shows from the start (0), so rate() works before the first failure.
  for (const result of ['success', 'error', 'requeue']) reconciles.labels(result).inc(0);
  leader.set(0);
  depth.set(0);
  return {
    registry,
    reconciled(result, seconds) {
      reconciles.labels(result).inc();
      if (result === 'error') errors.inc();
      duration.observe(seconds);
    },
    queueDepth: (n) => depth.set(n),
    leader: (leading) => leader.set(leading ? 1 : 0),
  };
}
